package verify

import (
	"fmt"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
)

// Action is the write a verdict leads to, for one record. Triage (the CLI
// and the TUI) and the reaper all build their plans from it, so the same
// verdict always means the same write.
type Action struct {
	Request actions.Request // valid when Left == ""
	// Left, when set, says why the record is left alone (an unknown
	// verdict, or a done verdict the schema cannot record).
	Left string
}

// ActionFor turns a hook's verdict on rec into a write: done → reconcile
// with the hook's ref, status and response; not_done → force-fail (the
// schema decides what that means where it has no failed state: a bare
// marker is deleted); unknown → none, with the reason. saw pins the write
// to the record as it was when the hook was asked. hook names the
// executable, for the audit log.
func ActionFor(rec *inspect.Record, r Result, saw *actions.Seen, reason, hook string) Action {
	ev := &write.Evidence{Verdict: string(r.Verdict), Ref: r.Ref, Detail: r.Detail, Hook: hook, TookMs: r.Took.Milliseconds()}
	req := actions.Request{Keyspace: rec.Keyspace, Key: rec.Key, Reason: reason, Saw: saw, Evidence: ev}
	switch r.Verdict {
	case Done:
		req.Kind, req.Ref, req.Status, req.Response = write.KindReconcile, r.Ref, r.Status, r.Response
		if req.Ref == "" && actions.NeedsRef(req.Kind, rec.Keyspace) {
			return Action{Left: fmt.Sprintf("the hook said done without a ref, and schema %s records the reference", rec.Keyspace.Schema.Name)}
		}
	case NotDone:
		req.Kind = write.KindFail
	default:
		why := r.Why
		if why == "" {
			why = "the hook could not tell"
		}
		return Action{Left: why}
	}
	return Action{Request: req}
}
