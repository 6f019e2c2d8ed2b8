package actions

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/internal/units"
)

// An undo of a retry claims the entry back for the consumer it was pending
// to, with its delivery count and its last delivery time (XCLAIM … TIME
// RETRYCOUNT JUSTID), guarded like every entry write: only if it is still
// pending exactly as the retry left it. Its idle time then reads as if
// the retry had never happened. Acks and dead-letters are not undoable:
// Redis cannot put an acknowledged entry back in a pending list.

// entryUndoableWhy says why a pending-entry write cannot be undone (""
// when it can).
func entryUndoableWhy(t UndoTarget) string {
	in, o := t.Intent, t.Outcome
	switch {
	case in.Undoable != nil && !*in.Undoable:
		return "not undoable: " + in.UndoNote
	case in.Action != write.KindRetry:
		return "not undoable: only a retry of a pending entry can be undone"
	case o.ID == "":
		return "its outcome is not in the log (in doubt): re-run that write's command to settle it first"
	case o.Outcome != write.Applied:
		return "the write was not applied (" + string(o.Outcome) + "): there is nothing to undo"
	case o.Entry == nil || o.Entry.Left == nil:
		return "the log does not say what the retry left (its outcome was settled by a re-read): undo cannot check the entry is still that"
	}
	return ""
}

// planEntryUndo plans the undo of one retry (see above).
func (e *Executor) planEntryUndo(ctx context.Context, x *UndoIndex, t UndoTarget, reason string, prior *chainState) (*Plan, error) {
	in := t.Intent
	ea := in.Entry
	req := EntryRequest{Kind: write.KindUndo, Stream: string(ea.Stream), Group: string(ea.Group), ID: ea.ID, Reason: reason, By: e.Identity.OSUser}
	ep := &entryPlan{req: req, op: "undo", to: string(ea.Consumer)}
	p := &Plan{Request: Request{Kind: write.KindUndo, Key: req.Stream, Reason: reason, By: req.By}, planned: time.Now(), entry: ep, reverts: &in}
	if why := x.Undoable(t); why != "" {
		p.Refused, p.Outcome = why, write.Refused
		return p, nil
	}
	rd, err := readEntryState(ctx, e.Client, req)
	if err != nil {
		return nil, fmt.Errorf("reading the pending entry: %s", explainEntry(err, e.Identity.RedisUser))
	}
	if prior != nil && prior.entry != nil {
		// The undo of a newer write of this entry runs first: this one
		// finds the entry as that one restores it.
		c := prior.entry
		rd.status, rd.consumer, rd.deliveries, rd.idleMs = "pending", c.consumer, c.deliveries, rd.nowMs-c.deliveredAtMs
	}
	ep.read, p.nowMs, p.Before = rd, rd.nowMs, rd.snapshot()
	left := t.Outcome.Entry.Left
	switch {
	case rd.status != "pending":
		p.Refused, p.Outcome = "the entry is not as the retry left it: it is no longer pending (acknowledged, or its group is gone); nothing written", write.Conflict
		return p, nil
	case rd.consumer != string(left.Consumer) || rd.deliveries != left.Deliveries:
		why := seenDrift(EntrySeen{Consumer: string(left.Consumer), Deliveries: left.Deliveries}, rd.consumer, rd.deliveries)
		p.Refused, p.Outcome = "the entry is not as the retry left it: "+why+"; nothing written", write.Conflict
		return p, nil
	case !rd.present:
		p.Refused, p.Outcome = "the entry was trimmed from the stream since: claiming it back would drop it from the pending list", write.Refused
		return p, nil
	}
	p.After = pendingSnapshot(ep.to, ea.Deliveries)
	p.Changes = append(diffSnapshots(p.Before, p.After),
		write.Change{Field: "(idle)", Before: units.FormatMs(rd.idleMs), After: units.FormatMs(rd.nowMs - ea.DeliveredAtMs)})
	p.script = casEntry
	p.args = []any{"undo", req.Group, req.ID, rd.consumer, strconv.FormatInt(rd.deliveries, 10), ep.to,
		strconv.FormatInt(ea.DeliveredAtMs, 10), strconv.FormatInt(ea.Deliveries, 10)}
	p.UndoNote = ep.undoNote()
	return p, nil
}

// entryChain is the entry as an undo of a retry restores it: pending to
// the consumer the retry found, with its delivery count and time.
type entryChain struct {
	consumer      string
	deliveries    int64
	deliveredAtMs int64
}

func entryChainOf(in audit.Entry) *entryChain {
	if in.Entry == nil {
		return nil
	}
	ea := in.Entry
	return &entryChain{consumer: string(ea.Consumer), deliveries: ea.Deliveries, deliveredAtMs: ea.DeliveredAtMs}
}
