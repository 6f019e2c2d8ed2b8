package actions

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
)

// storedExpiry keeps a schema's own expiry in step with a TTL the write
// sets: a library that reads its stored expiry (Powertools expiration,
// gopotency ExpiresAt) would otherwise treat the record as gone at the old
// time whatever its Redis TTL says. A stored processing deadline later than
// the new expiry is brought down to it: a record cannot stay in progress
// past its own end. An earlier deadline is left alone, so extending the
// life of a stuck in-progress record does not block its retries longer.
func (p *Plan) storedExpiry(s *inspect.Schema, d *inspect.Detail, ttl time.Duration) []string {
	var out []string
	if s.Expires != nil && p.hasField(s.Expires.Field) {
		out = append(out, s.Expires.Field, atMarker(s.Expires.Unit, ttl))
	}
	if s.Deadline != nil && d.Record.DeadlineMs > 0 && d.Record.DeadlineMs > p.nowMs+ttl.Milliseconds() {
		out = append(out, s.Deadline.Field, atMarker(s.Deadline.Unit, ttl))
	}
	return out
}

// hasField reports whether the record as read holds a field (or dot path);
// a value too large to read whole may hold it.
func (p *Plan) hasField(name string) bool {
	if _, ok := p.Before.Fields[name]; ok {
		return true
	}
	v, ok := p.Before.Fields["value"]
	return ok && strings.HasPrefix(v, "‹")
}

// pairs lists the field/value pairs the action writes.
func (p *Plan) pairs(s *inspect.Schema, spec inspect.ActionSpec) ([]string, error) {
	if p.Kind == write.KindExpire || p.Delete {
		return nil, nil
	}
	state, err := p.storedState(s, spec)
	if err != nil {
		return nil, err
	}
	w := stored{state: state, status: p.Status, response: p.replayResponse(s, spec)}
	if w.status == 0 {
		w.status = spec.Status
	}
	if s.Codec == inspect.CodecRaw {
		v := w.state
		if w.response != nil {
			v = *w.response // the bare pattern stores the response as the value
		}
		return []string{"value", v}, nil
	}
	return p.fieldPairs(s, spec, w), nil
}

// stored is what a write leaves for the library to read: the target
// state's stored value, and the replay status and response (0 and nil:
// none).
type stored struct {
	state    string
	status   int
	response *string
}

// storedState is the value the action stores as its target state: the
// action's own, or else the first the schema reads as that state.
func (p *Plan) storedState(s *inspect.Schema, spec inspect.ActionSpec) (string, error) {
	target := inspect.StateFailed
	if p.Kind == write.KindReconcile {
		target = inspect.StateSucceeded
	}
	state := spec.State
	if state == "" {
		if vals := s.StoredStates(target); len(vals) > 0 {
			state = vals[0]
		} else {
			return "", fmt.Errorf("schema %s has no stored value for %s: set actions.%s.state", s.Name, target, p.Kind)
		}
	}
	return state, nil
}

// replayResponse is the response the record replays (nil: none): the
// operator's, else the action's, else for a reconcile into a schema that
// stores one, a note naming the reference checked.
func (p *Plan) replayResponse(s *inspect.Schema, spec inspect.ActionSpec) *string {
	var response *string
	if p.Response != nil {
		response = p.Response
	} else if spec.Response != "" {
		r := spec.Response
		response = &r
	} else if p.Kind == write.KindReconcile && s.Response != "" {
		b, _ := json.Marshal(map[string]any{"reconciled": true, "ref": p.Ref})
		r := string(b)
		response = &r
	}
	return response
}

// fieldPairs lays out a hash's or JSON document's pairs: the action's own
// fields (by name), then each role the schema has a field for. Values are
// JSON literals in a JSON document.
func (p *Plan) fieldPairs(s *inspect.Schema, spec inspect.ActionSpec, w stored) []string {
	jsonVal := s.Codec == inspect.CodecJSON
	lit := func(v string) string {
		if !jsonVal {
			return v
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	var out pairList
	set := make([]string, 0, len(spec.Set))
	for k := range spec.Set {
		set = append(set, k)
	}
	sort.Strings(set)
	for _, k := range set {
		out.add(k, spec.Set[k])
	}
	out.add(s.State.Field, lit(w.state))
	if s.Status != "" && w.status != 0 {
		out.add(s.Status, strconv.Itoa(w.status)) // a number in JSON too
	}
	if s.Response != "" && w.response != nil {
		if jsonVal && json.Valid([]byte(*w.response)) {
			out.add(s.Response, *w.response) // keep structured responses structured
		} else {
			out.add(s.Response, lit(*w.response))
		}
	}
	out.add(spec.At, nowMarker)
	out.add(spec.By, lit(p.By))
	out.add(spec.Reason, lit(p.Reason))
	if p.Kind == write.KindReconcile {
		out.add(spec.Ref, lit(p.Ref))
	}
	return out
}

// pairList is field/value pairs in the order written.
type pairList []string

// add sets field to v; a role the schema gives no field ("") is not
// stored.
func (l *pairList) add(field, v string) {
	if field == "" {
		return
	}
	for i := 0; i < len(*l); i += 2 {
		if (*l)[i] == field { // two roles share one field: the later wins
			(*l)[i+1] = v
			return
		}
	}
	*l = append(*l, field, v)
}
