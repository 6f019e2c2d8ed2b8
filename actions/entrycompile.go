package actions

import (
	"strconv"

	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/internal/units"
)

// compile fills the script's op and arguments, the planned after-state and
// the diff both faces show.
func (ep *entryPlan) compile(p *Plan) {
	r, q := ep.read, ep.req
	ep.op, ep.to = string(q.Kind), r.consumer
	after := write.Snapshot{TTLms: -2}
	pending := "pending to " + strconv.Quote(r.consumer)
	switch q.Kind {
	case write.KindRetry:
		ep.op = string(q.Mode)
		left := r.deliveries
		if q.Mode != write.RetryRedeliver {
			ep.to = q.RecoveryConsumer
		}
		if q.Mode == write.RetryClaim {
			left++
		}
		after = pendingSnapshot(ep.to, left)
		p.Changes = diffSnapshots(p.Before, after)
		p.Changes = append(p.Changes, write.Change{Field: "(idle)", Before: units.FormatMs(r.idleMs), After: "0s"})
	case write.KindAck:
		p.Changes = []write.Change{{Field: "(pending)", Before: pending, After: "acknowledged (XACK)"}}
	case write.KindDeadLetter:
		p.Changes = []write.Change{{Field: "(pending)", Before: pending, After: "acknowledged (XACK)"},
			{Field: "(dead-letter)", Before: "(none)", After: "copied to " + strconv.Quote(q.DeadLetter) + " with idemctl.* origin fields"}}
	}
	p.After = after
	p.script = casEntry
	p.args = ep.args(p)
}

// args lays out ARGV for casEntry.
func (ep *entryPlan) args(p *Plan) []any {
	r, q := ep.read, ep.req
	args := []any{ep.op, q.Group, q.ID, r.consumer, strconv.FormatInt(r.deliveries, 10), ep.to, "", ""}
	if q.Kind == write.KindDeadLetter {
		args = append(args, "idemctl.stream", q.Stream, "idemctl.group", q.Group, "idemctl.id", q.ID,
			"idemctl.consumer", r.consumer, "idemctl.deliveries", strconv.FormatInt(r.deliveries, 10),
			"idemctl.reason", p.Reason, "idemctl.by", p.By)
	}
	return args
}

// keys are the script's KEYS.
func (ep *entryPlan) keys() []string {
	if ep.req.Kind == write.KindDeadLetter {
		return []string{ep.req.Stream, ep.req.DeadLetter}
	}
	return []string{ep.req.Stream}
}

// undoNote says why the write will not be undoable ("" when it will).
func (ep *entryPlan) undoNote() string {
	switch {
	case ep.op == "undo":
		return "an undo of a retry is not itself undoable: retry the entry again instead"
	case ep.req.Kind == write.KindAck:
		return "an acknowledged entry leaves the pending list for good: Redis cannot put it back"
	case ep.req.Kind == write.KindDeadLetter:
		return "a dead-lettered entry is acknowledged, and Redis cannot put it back in the pending list; its copy stays in the dead-letter stream"
	}
	return ""
}

// audit is the entry as an intent records it.
func (ep *entryPlan) audit() *write.EntryAudit {
	r, q := ep.read, ep.req
	a := &write.EntryAudit{Stream: write.Name(q.Stream), Group: write.Name(q.Group), ID: q.ID, Consumer: write.Name(r.consumer), Deliveries: r.deliveries,
		IdleMs: r.idleMs, DeliveredAtMs: r.nowMs - r.idleMs, Mode: q.Mode, DeadLetter: write.Name(q.DeadLetter),
		Fields: r.fields, Bytes: r.bytes, FieldsSHA1: r.sha1, Trimmed: !r.present}
	if ep.op != string(write.KindAck) && ep.op != string(write.KindDeadLetter) {
		a.To = write.Name(ep.to)
	}
	return a
}

// entryAuditOf is the entry line of p's audit entries (nil: a record).
func entryAuditOf(p *Plan) *write.EntryAudit {
	if p.entry == nil {
		return nil
	}
	return p.entry.audit()
}

// undoNoteOf is the undo note an intent records for p.
func undoNoteOf(v audit.Values, p *Plan) string {
	if p.entry != nil {
		return p.entry.undoNote()
	}
	return undoNote(v, p)
}

// runKey is what names the entry in a RunID, beside its stream.
func (ep *entryPlan) runKey() []any {
	q := ep.req
	var saw []any
	if q.Saw != nil {
		saw = []any{[]byte(q.Saw.Consumer), q.Saw.Deliveries}
	}
	return []any{[]byte(q.Group), q.ID, q.Mode, []byte(q.RecoveryConsumer), []byte(q.DeadLetter), saw}
}

// planTarget and auditTarget name what a write is on, as earlier runs are
// matched with it (MarkAlreadyApplied): a record's key, or a pending
// entry's stream, group and id.
func planTarget(p *Plan) string {
	if p.entry == nil {
		return p.Key
	}
	q := p.entry.req
	return entryTarget(q.Stream, q.Group, q.ID)
}

func auditTarget(e audit.Entry) string {
	if e.Entry == nil {
		return e.ExactKey()
	}
	return entryTarget(string(e.Entry.Stream), string(e.Entry.Group), e.Entry.ID)
}

func entryTarget(stream, group, id string) string {
	return "\x00entry\x00" + stream + "\x00" + group + "\x00" + id
}
