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

	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
)

// ParseKind maps a name to a Kind.
func ParseKind(s string) (write.Kind, error) {
	return parseKindOf(s, "action", write.KindExpire, write.KindFail, write.KindReconcile)
}

// parseKindOf maps s to the one of kinds it names; the error, naming what
// the kinds are, lists them.
func parseKindOf(s, what string, kinds ...write.Kind) (write.Kind, error) {
	if slices.Contains(kinds, write.Kind(s)) {
		return write.Kind(s), nil
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
func NeedsRef(kind write.Kind, ks *inspect.Keyspace) bool {
	return kind == write.KindReconcile && ks != nil && ks.Schema.Actions.Reconcile.Ref != ""
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

// Result is the outcome of one write.
type Result struct {
	Key      string         `json:"key"`
	Action   write.Kind     `json:"action"`
	Outcome  write.Outcome  `json:"outcome"`
	Detail   string         `json:"detail,omitempty"`
	ServerMs int64          `json:"server_ms,omitempty"`
	Changes  []write.Change `json:"changes,omitempty"`
	// AuditID is the write's intent id in the audit log ("" when none was
	// written): what `idemctl undo` takes.
	AuditID string `json:"audit_id,omitempty"`
	// UndoNote says why the write is not undoable ("" when it is), as its
	// plan announced before it ran.
	UndoNote string `json:"undo_note,omitempty"`
	// Replication is what the primary said about an applied write's
	// copies (WAIT): replicas_acked, fsynced, not_replicated.
	*write.Replication

	after *write.Version    // the version the write left (the script says)
	entry *write.EntryAudit // a pending-entry write: the entry as it left it
}

// Unreplicated reports whether r was applied on the primary but not
// acknowledged by the replicas (or fsyncs) the run waited for.
func (r *Result) Unreplicated() bool {
	return r.Outcome == write.Applied && r.Replication != nil && r.NotReplicated
}
