// Package write holds the values a guarded write is described by, which
// the write path (actions) and its audit log (actions/audit) both record:
// its kind and outcome, the record as seen and as left, its version and
// before-image, a pending entry's, the replicas that acknowledged it and
// the evidence behind it.
//
// Floor 2 of ARCHITECTURE.md, the write path, below actions and
// actions/audit: it may import the read engine and the foundations.
package write

// Kind is a repair action.
type Kind string

const (
	KindExpire    Kind = "expire"    // new TTL, or delete now (TTL 0)
	KindFail      Kind = "fail"      // processing -> failed, with a replay status/response
	KindReconcile Kind = "reconcile" // -> succeeded (or configured), after checking the source of truth
	// KindUndo restores a record to its before-image (see undo.go); not
	// a verb of ParseKind: it is planned from the audit log.
	KindUndo Kind = "undo"
)

// Pending-entry actions: a message a consumer group delivered to a consumer
// that never acknowledged it sits in the group's pending entries list
// (PEL), idle, like a stuck processing record. These Kinds repair one
// entry through the same executor as the record writes: planned from what
// the operator saw, compared-and-set in one script, waited for, audited.
const (
	// KindRetry hands the entry to be processed again (RetryMode).
	KindRetry Kind = "retry"
	// KindAck acknowledges it (XACK): its side effect is known to have
	// happened. Not undoable.
	KindAck Kind = "ack"
	// KindDeadLetter copies it, with where it came from, to a dead-letter
	// stream and acknowledges it, in one script. Not undoable.
	KindDeadLetter Kind = "dead-letter"
)

// Outcome is how one write ended.
type Outcome string

const (
	Applied Outcome = "applied"
	// AlreadyApplied: an earlier execution of the same run applied it
	// (see Executor.MarkAlreadyApplied); nothing written now.
	AlreadyApplied Outcome = "already_applied"
	Conflict       Outcome = "conflict"    // the record changed since the operator saw it: nothing written
	NotFound       Outcome = "not_found"   // the key is gone
	Refused        Outcome = "refused"     // policy, schema or ACL said no: nothing written
	Failed         Outcome = "error"       // the server answered with an error: nothing written
	NotApplied     Outcome = "not_applied" // the outcome was uncertain; a re-read shows it did not happen
	Unknown        Outcome = "unknown"     // uncertain, and the re-read could not tell
	Skipped        Outcome = "skipped"     // a bulk run was cancelled before this one
)

// Outcomes lists every outcome in the order summaries give them: what was
// done first, then what stopped a write, then what was never tried.
var Outcomes = []Outcome{Applied, AlreadyApplied, Conflict, NotFound, Refused, Failed, NotApplied, Unknown, Skipped}

// Snapshot is a record's state as read (bounded) or as a write will leave it.
type Snapshot struct {
	Exists      bool              `json:"exists"`
	Type        string            `json:"type,omitempty"`
	State       string            `json:"state,omitempty"`     // stored value
	Canonical   string            `json:"canonical,omitempty"` // processing, succeeded, …
	Fingerprint string            `json:"fingerprint,omitempty"`
	Version     string            `json:"version,omitempty"` // the whole record's digest, as printed for --from-file
	TTLms       int64             `json:"ttl_ms"`            // -1 none, -2 gone
	Fields      map[string]string `json:"fields,omitempty"`
	// Omitted are values not held whole: cut by the read cap (Fields then
	// shows their length), or left out of an audit entry (AuditValues).
	Omitted map[string]ValueDigest `json:"omitted,omitempty"`
}

// Change is one line of a before/after diff.
type Change struct {
	Field  string `json:"field"`
	Before string `json:"before"`
	After  string `json:"after"`
}
