package inspect

import (
	"fmt"
	"strings"
)

// Flags is a set of findings on one record.
type Flags uint32

const (
	FlagStale              Flags = 1 << iota // processing past its timeout
	FlagNoTTL                                // PTTL -1: the record never expires
	FlagProcessingNoTTL                      // processing and never expires: retries blocked forever
	FlagUnknownState                         // a stored state value the schema maps to no canonical state
	FlagMissingFingerprint                   // the schema has a fingerprint but the record does not
	FlagWrongType                            // the key's Redis type is not the schema's container
	FlagLargeResponse                        // replay body above the keyspace's large-response threshold
	FlagDecodeError                          // a field could not be decoded (bad JSON, bad number, bad time)
	FlagTemplateMismatch                     // the key does not fit the keyspace's key template
	FlagTruncated                            // a value exceeded the read cap and was not fully fetched
	FlagUndecoded                            // matches no schema: shown with type and size only
	FlagLockMissing                          // processing, and its companion lock is gone
	FlagLockOnly                             // a lock whose record does not exist: an in-flight request
	FlagFieldTTLMixed                        // hash fields with their own TTLs that end at different times
	FlagMemoryEstimated                      // a big collection: MEMORY USAGE sampled it rather than walk it
	FlagLongFingerprint                      // a fingerprint longer than shown (512 bytes) or than the read cap
	numFlags               = iota
)

// FlagInfo names and explains one flag. Short is the one word the TUI shows
// in its narrow table; a filter accepts it as well as Name.
type FlagInfo struct {
	Flag    Flags
	Name    string
	Explain string
	Short   string
}

var flagInfos = [numFlags]FlagInfo{
	{FlagStale, "stale", "processing for longer than the keyspace's processing timeout: the worker probably crashed", "stale"},
	{FlagNoTTL, "no_ttl", "the key has no TTL (PTTL -1) and will never expire on its own", "nottl"},
	{FlagProcessingNoTTL, "processing_no_ttl", "processing with no TTL: every retry of this request is blocked until someone repairs it", "stuck"},
	{FlagUnknownState, "unknown_state", "the stored state is a value the schema does not map to any known state", "badstate"},
	{FlagMissingFingerprint, "missing_fingerprint", "no request fingerprint: a retry with another body cannot be detected", "nofp"},
	{FlagWrongType, "wrong_type", "the key's Redis type does not match the schema's container", "wrongtype"},
	{FlagLargeResponse, "large_response", "the stored replay response is above the large-response threshold", "big"},
	{FlagDecodeError, "decode_error", "a field could not be decoded (bad JSON, number or timestamp)", "decode"},
	{FlagTemplateMismatch, "template_mismatch", "the key does not fit the keyspace's key template", "nomatch"},
	{FlagTruncated, "truncated", "a value was larger than the read cap and was not fetched whole", "cut"},
	{FlagUndecoded, "undecoded", "the key matches the pattern but not the schema (other type or format): shown with type and size only", "undecoded"},
	{FlagLockMissing, "lock_missing", "processing, but the lock its worker held is gone: the worker died", "nolock"},
	{FlagLockOnly, "lock_only", "a lock with no record: a request in flight (the library writes the record only when done)", "lockonly"},
	{FlagFieldTTLMixed, "field_ttl_mixed", "the record's fields carry their own TTLs and end at different times (e.g. a response that outlives its state): it will be left half-written", "fieldttl"},
	{FlagMemoryEstimated, "memory_estimated", "a big collection: its memory is MEMORY USAGE's estimate from a sample, since measuring it exactly would walk every element and stall Redis", "estmem"},
	{FlagLongFingerprint, "long_fingerprint", "the fingerprint is longer than idemctl shows (512 bytes; its head is kept) or than the read cap: present, but not a digest a library writes", "longfp"},
}

// SnapshotMemoryExplain is memory_estimated's meaning for records read
// from a snapshot, where every record's memory is estimated (not because
// it is a big collection).
const SnapshotMemoryExplain = "read from a snapshot: its memory is estimated from the record's encoding in the file, as MEMORY USAGE counts it (a file holds no allocator figures)"

// ExplainFor is the flag's explanation for records read from source:
// memory_estimated says why on a snapshot.
func (fi FlagInfo) ExplainFor(source *Source) string {
	if fi.Flag == FlagMemoryEstimated && source != nil && source.Kind == "snapshot" {
		return SnapshotMemoryExplain
	}
	return fi.Explain
}

// AllFlags lists every flag with its name and explanation.
func AllFlags() []FlagInfo { return flagInfos[:] }

// Has reports whether all of f's bits are set.
func (fs Flags) Has(f Flags) bool { return fs&f == f }

// Names lists the set flags' names in a fixed order.
func (fs Flags) Names() []string {
	var out []string
	for _, fi := range flagInfos {
		if fs&fi.Flag != 0 {
			out = append(out, fi.Name)
		}
	}
	return out
}

func (fs Flags) String() string { return strings.Join(fs.Names(), ",") }

// ParseFlag maps a flag name to its bit.
func ParseFlag(name string) (Flags, error) {
	for _, fi := range flagInfos {
		if fi.Name == name || fi.Short == name {
			return fi.Flag, nil
		}
	}
	names := make([]string, len(flagInfos))
	for i, fi := range flagInfos {
		names[i] = fi.Name
		if fi.Short != fi.Name {
			names[i] += " (" + fi.Short + ")"
		}
	}
	return 0, fmt.Errorf("unknown flag %q (known: %s)", name, strings.Join(names, ", "))
}

// Explain returns the one-line explanation of a single flag.
func (fs Flags) Explain() string {
	for _, fi := range flagInfos {
		if fi.Flag == fs {
			return fi.Explain
		}
	}
	return ""
}
