// Package actions performs idemctl's guarded writes: expire, force-fail and
// mark reconciled. Every write is a compare-and-set Lua script against what
// the operator saw, refused unless writes are enabled, and audited before
// and after. It holds no UI code: the CLI and the TUI share it.
//
// Floor 2 of ARCHITECTURE.md: it may import the read engine and the
// foundations (floors 0–1).
package actions

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/idemctl/idemctl/inspect"
)

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

// ParseKind maps a name to a Kind.
func ParseKind(s string) (Kind, error) {
	return parseKindOf(s, "action", KindExpire, KindFail, KindReconcile)
}

// parseKindOf maps s to the one of kinds it names; the error, naming what
// the kinds are, lists them.
func parseKindOf(s, what string, kinds ...Kind) (Kind, error) {
	if slices.Contains(kinds, Kind(s)) {
		return Kind(s), nil
	}
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	return "", fmt.Errorf("unknown %s %q (%s)", what, s, strings.Join(names, ", "))
}

// NeedsRef reports whether a write of kind on a record of ks must carry a
// reference from the authoritative system: a reconcile, where the schema
// records one (actions.reconcile.ref). Both faces ask for it up front, and
// a plan without it is refused.
func NeedsRef(kind Kind, ks *inspect.Keyspace) bool {
	return kind == KindReconcile && ks != nil && ks.Schema.Actions.Reconcile.Ref != ""
}

// TTLMode says what a write does to the TTL.
type TTLMode string

const (
	TTLKeep      TTLMode = "keep"      // leave it
	TTLRetention TTLMode = "retention" // the keyspace's retention horizon
	TTLSet       TTLMode = "set"       // TTL.D exactly
)

// TTL is the TTL choice of a request. For expire, D == 0 means delete.
type TTL struct {
	Mode TTLMode
	D    time.Duration
}

// Seen is what the operator saw and expects to still be there.
type Seen struct {
	State       string // stored (raw) state value
	Fingerprint string
	Version     string // the record's printed version (Snapshot.Version); "" when not pinned
}

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

// Result is the outcome of one write.
type Result struct {
	Key      string   `json:"key"`
	Action   Kind     `json:"action"`
	Outcome  Outcome  `json:"outcome"`
	Detail   string   `json:"detail,omitempty"`
	ServerMs int64    `json:"server_ms,omitempty"`
	Changes  []Change `json:"changes,omitempty"`
	// AuditID is the write's intent id in the audit log ("" when none was
	// written): what `idemctl undo` takes.
	AuditID string `json:"audit_id,omitempty"`
	// UndoNote says why the write is not undoable ("" when it is), as its
	// plan announced before it ran.
	UndoNote string `json:"undo_note,omitempty"`
	// Replication is what the primary said about an applied write's
	// copies (WAIT): replicas_acked, fsynced, not_replicated.
	*Replication

	after *Version    // the version the write left (the script says)
	entry *EntryAudit // a pending-entry write: the entry as it left it
}

// Unreplicated reports whether r was applied on the primary but not
// acknowledged by the replicas (or fsyncs) the run waited for.
func (r *Result) Unreplicated() bool {
	return r.Outcome == Applied && r.Replication != nil && r.NotReplicated
}
