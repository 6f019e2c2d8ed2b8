package inspect

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/idemctl/idemctl/inspect/keytemplate"
)

// Compile checks the schema and builds its lookup tables. The parts are
// checked in this order so that a schema with several mistakes always
// reports the same one first.
func (s *Schema) Compile() error {
	where := "schema " + s.Name
	if err := s.compileCodec(where); err != nil {
		return err
	}
	if err := s.compileStates(where); err != nil {
		return err
	}
	if s.Lock != nil {
		if err := s.Lock.compile(where); err != nil {
			return err
		}
	}
	if err := s.checkTimestamps(where); err != nil {
		return err
	}
	if err := s.checkActionModes(where); err != nil {
		return err
	}
	if s.Defaults.KeyTemplate != "" {
		if _, err := keytemplate.Parse(s.Defaults.KeyTemplate); err != nil {
			return fmt.Errorf("%s: %v", where, err)
		}
	}
	s.compileFields()
	if err := s.compileRequires(where); err != nil {
		return err
	}
	return s.checkActionSets(where)
}

// compileCodec fills in the container's default codec and checks that the
// codec fits the container and the fields the schema names.
func (s *Schema) compileCodec(where string) error {
	switch s.Container {
	case ContainerHash:
		if s.Codec == "" {
			s.Codec = CodecFields
		}
		if s.Codec != CodecFields {
			return fmt.Errorf("%s: a hash container uses codec fields, not %q", where, s.Codec)
		}
	case ContainerString:
		if s.Codec == "" {
			s.Codec = CodecJSON
		}
		if s.Codec != CodecJSON && s.Codec != CodecRaw {
			return fmt.Errorf("%s: a string container uses codec json or raw, not %q", where, s.Codec)
		}
	default:
		return fmt.Errorf("%s: container must be hash or string, not %q", where, s.Container)
	}
	if s.Codec != CodecRaw && s.State.Field == "" {
		return fmt.Errorf("%s: state.field is required", where)
	}
	if s.Codec == CodecRaw && (s.Fingerprint != "" || s.Status != "" || s.Failure != "" || s.Created != nil || s.Deadline != nil || s.Expires != nil) {
		return fmt.Errorf("%s: a raw marker has no fields; drop fingerprint/status/created/deadline", where)
	}
	return nil
}

// compileStates builds the state map's lookups (exact, then case-folded)
// and the canonical states for values not in it and for a missing field.
func (s *Schema) compileStates(where string) error {
	s.exact = make(map[string]interned, len(s.State.Map))
	s.folded = make(map[string]State, len(s.State.Map))
	for raw, canon := range s.State.Map {
		st, err := parseCanonical(where+": state.map["+raw+"]", canon)
		if err != nil {
			return err
		}
		s.exact[raw] = interned{st, raw}
		s.folded[strings.ToLower(raw)] = st
	}
	var err error
	if s.other, err = parseCanonical(where+": state.otherwise", s.State.Otherwise); err != nil {
		return err
	}
	if s.miss, err = parseCanonical(where+": state.missing", s.State.Missing); err != nil {
		return err
	}
	return nil
}

func parseCanonical(where, name string) (State, error) {
	if name == "" {
		return StateUnknown, nil
	}
	st, ok := ParseState(name)
	if !ok || st == StateExpired {
		return 0, fmt.Errorf("%s: unknown state %q (want processing, succeeded, failed, reconciled or unknown)", where, name)
	}
	return st, nil
}

// compile splits the lock's key around {key}, for LockKey and RecordKey,
// and checks the unit its value is read in.
func (l *LockSpec) compile(where string) error {
	pre, suf, ok := strings.Cut(l.Key, "{key}")
	if !ok || pre == "" && suf == "" || strings.Contains(suf, "{key}") {
		return fmt.Errorf("%s: lock.key must contain {key} once with a prefix or suffix, e.g. \"{key}:lock\"", where)
	}
	l.prefix, l.suffix = pre, suf
	switch l.Created {
	case "", UnitSeconds, UnitMillis, UnitFloatSeconds:
	default:
		return fmt.Errorf("%s: lock.created must be s, ms or float_s", where)
	}
	return nil
}

// checkTimestamps checks that each timestamp names a field and a unit.
func (s *Schema) checkTimestamps(where string) error {
	for _, ts := range []*TimeSpec{s.Created, s.Deadline, s.Expires} {
		if ts == nil {
			continue
		}
		if ts.Field == "" {
			return fmt.Errorf("%s: a timestamp needs a field", where)
		}
		switch ts.Unit {
		case UnitSeconds, UnitMillis, UnitFloatSeconds, UnitRFC3339:
		default:
			return fmt.Errorf("%s: timestamp %s: unit must be s, ms, float_s or rfc3339, not %q", where, ts.Field, ts.Unit)
		}
	}
	return nil
}

// actionsByName are the schema's repair actions by their names in YAML.
func (s *Schema) actionsByName() map[string]ActionSpec {
	return map[string]ActionSpec{"fail": s.Actions.Fail, "reconcile": s.Actions.Reconcile}
}

// checkActionModes checks each action's mode, and that an update of a raw
// marker does not ask for fields it cannot hold.
func (s *Schema) checkActionModes(where string) error {
	for name, a := range s.actionsByName() {
		switch a.Mode {
		case "", "update", "delete", "refuse":
		default:
			return fmt.Errorf("%s: actions.%s.mode must be update, delete or refuse, not %q", where, name, a.Mode)
		}
		if a.Mode == "update" && s.Codec == CodecRaw && (a.At != "" || a.By != "" || a.Reason != "" || a.Ref != "") {
			return fmt.Errorf("%s: actions.%s: a raw marker has no fields to record at/by/reason/ref in", where, name)
		}
	}
	return nil
}

// compileFields lays out the role fields in slot order (the hash fields
// HMGET fetches) and maps each field or JSON path to the slots it fills.
func (s *Schema) compileFields() {
	s.fields = make([]string, numSlots)
	s.fields[slotState] = s.State.Field
	s.fields[slotFingerprint] = s.Fingerprint
	s.fields[slotStatus] = s.Status
	if s.Created != nil {
		s.fields[slotCreated] = s.Created.Field
	}
	if s.Deadline != nil {
		s.fields[slotDeadline] = s.Deadline.Field
	}
	if s.Expires != nil {
		s.fields[slotExpires] = s.Expires.Field
	}
	s.fields[slotFailure] = s.Failure
	s.paths = map[string][]int{}
	for slot, name := range s.fields {
		if name != "" {
			s.paths[name] = append(s.paths[name], slot)
		}
	}
}

// compileRequires adds the required JSON paths to s.paths, after the role
// slots: a decoder marks each one it finds (at most 16, one bit each).
func (s *Schema) compileRequires(where string) error {
	if len(s.Requires) > 0 && s.Codec != CodecJSON {
		return fmt.Errorf("%s: requires lists JSON paths: only JSON records have them", where)
	}
	if len(s.Requires) > 16 {
		return fmt.Errorf("%s: requires lists at most 16 paths", where)
	}
	for i, p := range s.Requires {
		if p == "" {
			return fmt.Errorf("%s: requires: an empty path", where)
		}
		s.paths[p] = append(s.paths[p], numSlots+i)
	}
	return nil
}

// checkActionSets checks the constants each action writes: named fields,
// and for JSON records JSON values.
func (s *Schema) checkActionSets(where string) error {
	for name, a := range s.actionsByName() {
		for k, v := range a.Set {
			switch {
			case s.Codec == CodecRaw:
				return fmt.Errorf("%s: actions.%s.set: a raw marker has no fields", where, name)
			case k == "":
				return fmt.Errorf("%s: actions.%s.set: an empty field name", where, name)
			case s.Codec == CodecJSON && !json.Valid([]byte(v)):
				return fmt.Errorf("%s: actions.%s.set.%s: %q is not a JSON value (quote strings: '\"text\"')", where, name, k, v)
			}
		}
	}
	return nil
}
