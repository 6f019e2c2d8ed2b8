package inspect

import (
	"sort"
	"strings"

	"github.com/idemctl/idemctl/internal/units"
)

// Container is how a record is stored in Redis.
type Container string

const (
	ContainerHash   Container = "hash"   // one field per attribute
	ContainerString Container = "string" // one value: JSON or a bare marker
)

// Codec is how a string container's value is encoded.
type Codec string

const (
	CodecFields Codec = "fields" // hash fields (hash containers only)
	CodecJSON   Codec = "json"   // a JSON object; field names are dot paths
	CodecRaw    Codec = "raw"    // the value itself is the state (bare SETNX marker)
)

// TimeUnit is how a timestamp field is written.
type TimeUnit string

const (
	UnitSeconds      TimeUnit = "s"
	UnitMillis       TimeUnit = "ms"
	UnitFloatSeconds TimeUnit = "float_s"
	UnitRFC3339      TimeUnit = "rfc3339"
)

// TimeSpec names a timestamp field and its unit.
type TimeSpec struct {
	Field string   `yaml:"field"`
	Unit  TimeUnit `yaml:"unit"`
}

// StateSpec maps stored state values onto canonical states.
type StateSpec struct {
	Field     string            `yaml:"field"`     // ignored by the raw codec: the value is the state
	Map       map[string]string `yaml:"map"`       // stored value -> canonical state name
	Otherwise string            `yaml:"otherwise"` // canonical state for values not in Map ("" = unknown)
	Missing   string            `yaml:"missing"`   // canonical state when the field is absent ("" = unknown)
}

// Defaults are keyspace settings a schema suggests; keyspace config and flags
// override them.
type Defaults struct {
	Match             string         `yaml:"match"`
	KeyTemplate       string         `yaml:"key_template"`
	ProcessingTimeout units.Duration `yaml:"processing_timeout"`
	ReserveTTL        units.Duration `yaml:"reserve_ttl"`
	Retention         units.Duration `yaml:"retention"`
}

// LockSpec describes a companion lock key kept beside each record.
type LockSpec struct {
	// Key derives the lock's key from the record's: "{key}:lock", "lock:{key}".
	Key string `yaml:"key"`
	// StaleIfMissing: a processing record whose lock is gone is stale (the
	// worker that held it died), whatever its age.
	StaleIfMissing bool `yaml:"stale_if_missing"`
	// Orphans: a lock whose record does not exist is itself an in-flight
	// request (libraries that write the record only on completion).
	Orphans bool `yaml:"orphans"`
	// Created reads the lock's value as its creation time (s, ms, float_s).
	Created TimeUnit `yaml:"created"`
	// Strip is removed from the front of the record key before {key} is
	// filled: record "idempotency_keys:abc" with strip "idempotency_keys:"
	// and key "idempotency_keys:lock:{key}" gives "idempotency_keys:lock:abc".
	Strip string `yaml:"strip"`

	prefix, suffix string
}

// LockKey is the lock companion's key for a record key.
func (l *LockSpec) LockKey(recordKey string) string {
	return l.prefix + strings.TrimPrefix(recordKey, l.Strip) + l.suffix
}

// RecordKey returns the record key a lock key belongs to, if it is one.
func (l *LockSpec) RecordKey(key string) (string, bool) {
	if len(key) <= len(l.prefix)+len(l.suffix) || !strings.HasPrefix(key, l.prefix) || !strings.HasSuffix(key, l.suffix) {
		return "", false
	}
	return l.Strip + key[len(l.prefix):len(key)-len(l.suffix)], true
}

// ActionSpec says what a repair action writes for this schema.
type ActionSpec struct {
	Mode     string `yaml:"mode"`     // update (default), delete, or refuse
	Why      string `yaml:"why"`      // shown when refused, or why delete is the repair
	State    string `yaml:"state"`    // stored state value to write (default: the schema's failed / succeeded value)
	Status   int    `yaml:"status"`   // default replay status (0: leave unset)
	Response string `yaml:"response"` // default replay response ("" leaves it unset)
	At       string `yaml:"at"`       // field for the server time of the repair (epoch ms)
	By       string `yaml:"by"`       // field for who did it
	Reason   string `yaml:"reason"`   // field for the operator's reason
	Ref      string `yaml:"ref"`      // field for the reconciliation reference (reconcile only)
	// Set writes constant values the library needs to replay the record
	// (field or dot path → value; JSON literals for JSON records, where
	// null removes the path), e.g. the response headers an express
	// middleware iterates over.
	Set map[string]string `yaml:"set"`
}

// ActionSpecs are the schema's repair semantics; expire needs none.
type ActionSpecs struct {
	Fail      ActionSpec `yaml:"fail"`
	Reconcile ActionSpec `yaml:"reconcile"`
}

// Schema describes one record format. Presets are schemas shipped as data.
type Schema struct {
	Name        string    `yaml:"-"`
	Description string    `yaml:"description"`
	Container   Container `yaml:"container"`
	Codec       Codec     `yaml:"codec"`
	State       StateSpec `yaml:"state"`
	Fingerprint string    `yaml:"fingerprint"`
	Status      string    `yaml:"status"`
	Response    string    `yaml:"response"`
	// Failure names a stored failure replay (node-idempotency's
	// response.error): a completed record holding one replays the failure,
	// so it is failed, whatever its state field says.
	Failure  string    `yaml:"failure"`
	Created  *TimeSpec `yaml:"created"`  // creation / start time: age = now - created
	Deadline *TimeSpec `yaml:"deadline"` // processing deadline: stale once passed
	Expires  *TimeSpec `yaml:"expires"`  // record expiry: state "expired" once passed (derived, never stored)
	// ExpiresOpaque says why the record's own expiry cannot be rewritten
	// (it lives inside an encoding idemctl does not write): a write that
	// sets a new TTL is refused with it rather than leave the two to disagree.
	ExpiresOpaque string `yaml:"expires_opaque"`
	// FingerprintOptional: the library stores a fingerprint only when
	// configured to (the key itself is a payload hash), so its absence is
	// not a finding.
	FingerprintOptional bool `yaml:"fingerprint_optional"`
	// Requires lists JSON paths every record of this format has (e.g.
	// request.method): a document without them is another format, shown as
	// undecoded rather than read as a record with its state missing.
	Requires []string  `yaml:"requires"`
	Lock     *LockSpec `yaml:"lock"`
	// AgeFromTTL: the reserve step sets the TTL at creation and stores no
	// timestamp, so a processing record's age is reserve TTL - remaining TTL.
	AgeFromTTL bool        `yaml:"age_from_ttl"`
	Defaults   Defaults    `yaml:"defaults"`
	Actions    ActionSpecs `yaml:"actions"`

	exact  map[string]interned // compiled Map, exact match
	folded map[string]State    // compiled Map, case-folded
	other  State
	miss   State
	fields []string         // hash fields fetched with HMGET, in slot order
	paths  map[string][]int // JSON paths to the slots they fill (two roles may share one); numSlots+i: Requires[i]
}

// interned is a compiled state entry; raw is the schema's own string, shared
// by every record that stores it.
type interned struct {
	st  State
	raw string
}

// Hash field slots in Schema.fields.
const (
	slotState = iota
	slotFingerprint
	slotStatus
	slotCreated
	slotDeadline
	slotExpires
	slotFailure
	numSlots
)

// MissingState is the state a record without a stored state is read as
// (state.missing; unknown when unset).
func (s *Schema) MissingState() State { return s.miss }

// mapState maps a stored state value to a canonical state. The returned raw
// string is the schema's own spelling when it matched, so records share it.
func (s *Schema) mapState(raw string, present bool) (State, string, bool) {
	if !present {
		return s.miss, "", s.miss != StateUnknown
	}
	if e, ok := s.exact[raw]; ok {
		return e.st, e.raw, true
	}
	if st, ok := s.folded[strings.ToLower(raw)]; ok {
		return st, raw, true
	}
	return s.other, raw, s.other != StateUnknown
}

// StoredStates lists the stored values that map to a canonical state, sorted.
func (s *Schema) StoredStates(st State) []string {
	var out []string
	for raw, canon := range s.State.Map {
		if c, _ := ParseState(canon); c == st {
			out = append(out, raw)
		}
	}
	sort.Strings(out)
	return out
}

// CanonicalOf maps a stored state value to its canonical state.
func (s *Schema) CanonicalOf(raw string) (State, bool) {
	st, _, ok := s.mapState(raw, raw != "")
	return st, ok
}
