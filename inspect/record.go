// Package inspect scans, decodes and classifies idempotency records stored in
// Redis. It holds no UI code: the CLI and the TUI both consume its typed
// records and streamed batches.
//
// Floor 1 of ARCHITECTURE.md, the read engine: it may import the foundations
// (floor 0), never the write path, a screen or the command layer.
package inspect

import "strings"

// State is the canonical lifecycle state of a record, whatever the schema
// stores.
type State uint8

const (
	StateUnknown State = iota
	StateProcessing
	StateSucceeded
	StateFailed
	StateReconciled
	StateExpired // derived: a deadline stored in the record has passed
	numStates
)

var stateNames = [...]string{"unknown", "processing", "succeeded", "failed", "reconciled", "expired"}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "unknown"
}

// AllStates lists the canonical states in display order.
func AllStates() []State {
	return []State{StateProcessing, StateSucceeded, StateFailed, StateReconciled, StateExpired, StateUnknown}
}

// ParseState maps a canonical state name (case-insensitive) to a State.
func ParseState(s string) (State, bool) {
	for i, n := range stateNames {
		if strings.EqualFold(n, s) {
			return State(i), true
		}
	}
	return StateUnknown, false
}

// KeyType is the Redis type of a key, as far as the scan learned it.
type KeyType uint8

const (
	TypeUnknown KeyType = iota
	TypeString
	TypeHash
	TypeList
	TypeSet
	TypeZSet
	TypeStream
	TypeOther
)

var typeNames = [...]string{"unknown", "string", "hash", "list", "set", "zset", "stream", "other"}

func (t KeyType) String() string { return typeNames[t] }

func parseKeyType(s string) KeyType {
	for i, n := range typeNames {
		if n == s {
			return KeyType(i)
		}
	}
	return TypeOther
}

// AgeSource says how a record's age was derived.
type AgeSource uint8

const (
	AgeUnknown  AgeSource = iota
	AgeField              // a creation timestamp stored in the record
	AgeTTL                // reserve TTL minus remaining TTL (the reserve step set the TTL)
	AgeDeadline           // processing timeout minus time left to a stored deadline
)

var ageSourceNames = [...]string{"unknown", "field", "ttl", "deadline"}

func (a AgeSource) String() string { return ageSourceNames[a] }

// Record is one idempotency record as the scan saw it. Strings alias the
// Redis replies; Groups alias Key, so a record costs little beyond its key
// and fingerprint.
type Record struct {
	Key         string
	Keyspace    *Keyspace
	Groups      []string // template captures, in Keyspace.Template.Names() order; nil when the key does not fit
	RawState    string
	Fingerprint string
	TTLms       int64 // -1: no TTL; TTLUnknown: could not be read
	MemoryBytes int64 // -1: unknown
	AgeMs       int64 // -1: unknown
	ResponseLen int64 // -1: no response
	DeadlineMs  int64 // server-clock epoch ms of a stored deadline; 0: none
	LockTTLms   int64 // companion lock: its PTTL (-1 none); LockAbsent; 0 when the schema has no lock
	Flags       Flags
	Status      int32 // replay HTTP status; 0: none
	Type        KeyType
	State       State
	AgeSource   AgeSource
}

// TTLUnknown marks a TTL the scan could not read.
const TTLUnknown = -3

// LockAbsent marks a schema lock that does not exist (PTTL -2).
const LockAbsent = -2

// Stale reports whether the record is processing past its timeout.
func (r *Record) Stale() bool { return r.Flags.Has(FlagStale) }

// Group returns the value of the named template capture, or "".
func (r *Record) Group(name string) string {
	if r.Keyspace == nil || r.Groups == nil {
		return ""
	}
	for i, n := range r.Keyspace.Template.Names() {
		if n == name && i < len(r.Groups) {
			return r.Groups[i]
		}
	}
	return ""
}

// RecordVersion is a snapshot record's version in the four parts a guarded
// write pins (write.Version: type, content, expiry, companion), computed
// from the file exactly as the version script computes them on the server
// — so a write pinned to a snapshot's record refuses the live record if
// anything in it changed since. Err says why a record cannot be pinned.
type RecordVersion struct {
	Type, Content, Expiry, Companion string
	Err                              string
}
