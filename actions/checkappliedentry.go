package actions

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
)

// An applied pending-entry write against the entry as it is now. A
// failover that lost it leaves the entry pending again exactly as the
// write found it (the intent's consumer and delivery count): that tells a
// lost write from one the application went on from.

// checkEntry reads the entry (and a dead-letter's copy) and says whether
// what the write left is still so.
func checkEntry(ctx context.Context, c redis.UniversalClient, t UndoTarget) (string, string) {
	in, o := t.Intent, t.Outcome
	ea := in.Entry
	now, err := readEntryState(ctx, c, EntryRequest{Stream: string(ea.Stream), Group: string(ea.Group), ID: ea.ID})
	if err != nil {
		return CheckUnknown, "the entry could not be read: " + explainEntry(err, "")
	}
	switch now.status {
	case "no_stream":
		return CheckGone, "the stream no longer exists"
	case "nogroup":
		return CheckGone, "the consumer group no longer exists on the stream"
	}
	asBefore := now.status == "pending" && now.consumer == string(ea.Consumer) && now.deliveries == ea.Deliveries
	switch in.Action {
	case write.KindRetry, write.KindUndo: // an undo of a retry is a claim back
		return checkRetry(in, o, now, asBefore)
	case write.KindAck:
		return checkAck(now, asBefore, "the ack")
	case write.KindDeadLetter:
		return checkDeadLetter(ctx, c, in, o, now, asBefore)
	}
	return CheckUnknown, "not a pending-entry action idemctl knows: " + inspect.Sanitize(string(in.Action))
}

// checkRetry: still pending as the retry (or an undo of one) left it
// (kept), or acked or claimed since (changed), or pending to its consumer
// as before (lost).
func checkRetry(in, o audit.Entry, now entryRead, asBefore bool) (string, string) {
	if o.Entry == nil || o.Entry.Left == nil {
		return CheckUnknown, "the log does not say what the write left (its outcome was settled by a re-read)"
	}
	left := o.Entry.Left
	to := strconv.Quote(inspect.Sanitize(string(left.Consumer)))
	switch {
	case now.status != "pending":
		return CheckChanged, "acknowledged since: processed by the consumer the write handed it to (" + to + "), as it should be"
	case now.consumer == string(left.Consumer) && now.deliveries == left.Deliveries:
		// A redeliver leaves consumer and count as they were: only the
		// delivery time, which it set to the write's, tells.
		if in.Entry.Mode == write.RetryRedeliver && o.ServerMs > 0 && now.nowMs-now.idleMs < o.ServerMs-1000 {
			return CheckLost, fmt.Sprintf("pending to %s, idle since %s, before the write reset it: the write was taken back (a failover to a replica that never had it)",
				to, time.UnixMilli(now.nowMs-now.idleMs).UTC().Format(time.RFC3339))
		}
		return CheckKept, ""
	case asBefore:
		return CheckLost, fmt.Sprintf("pending again to the original consumer %q with %d deliveries, as before the write: the write was taken back (a failover to a replica that never had it)",
			inspect.Sanitize(now.consumer), now.deliveries)
	case now.consumer == string(left.Consumer):
		return CheckChanged, fmt.Sprintf("delivered again to %s since (deliveries %d → %d): it is being processed", to, left.Deliveries, now.deliveries)
	}
	return CheckChanged, fmt.Sprintf("claimed by another consumer since: %q (deliveries %d); nothing to re-apply", inspect.Sanitize(now.consumer), now.deliveries)
}

// checkAck: not pending (kept), pending as before (lost). Pending
// otherwise, it was delivered again after the write was taken back (or
// its group rewound): the application holds it, re-acking it blind would
// be wrong.
func checkAck(now entryRead, asBefore bool, what string) (string, string) {
	switch {
	case now.status != "pending":
		return CheckKept, ""
	case asBefore:
		return CheckLost, fmt.Sprintf("pending again to %q with %d deliveries, as before %s: the write was taken back (a failover to a replica that never had it)",
			inspect.Sanitize(now.consumer), now.deliveries, what)
	}
	return CheckChanged, fmt.Sprintf("pending again, to %q with %d deliveries, not as %s found it: delivered again since (the write taken back, or the group rewound); nothing to re-apply blind",
		inspect.Sanitize(now.consumer), now.deliveries, what)
}

// checkDeadLetter: not pending and its copy in the dead-letter stream
// (kept), pending as before and no copy (lost).
func checkDeadLetter(ctx context.Context, c redis.UniversalClient, in, o audit.Entry, now entryRead, asBefore bool) (string, string) {
	dlq := strconv.Quote(inspect.Sanitize(string(in.Entry.DeadLetter)))
	id := ""
	if o.Entry != nil {
		id = o.Entry.DeadLetterID
	}
	cp, err := findCopy(ctx, c, in.Entry, id, copySearchFrom(in))
	if err != nil {
		return CheckUnknown, err.Error()
	}
	switch {
	case cp.id == "" && !cp.complete:
		return CheckUnknown, fmt.Sprintf("the log has no copy id, and the copy is not among the %d newest entries of %s: check it by hand", maxCopyScan, dlq)
	case now.status != "pending" && cp.id != "":
		return CheckKept, ""
	case now.status != "pending":
		return CheckGone, "acknowledged, but its copy is no longer in " + dlq + " (trimmed or deleted since)"
	case asBefore && cp.id == "":
		return checkAck(now, true, "the dead-letter")
	case cp.id != "":
		return CheckChanged, fmt.Sprintf("pending again (to %q, deliveries %d) though its copy %s is in %s", inspect.Sanitize(now.consumer), now.deliveries, cp.id, dlq)
	}
	return checkAck(now, false, "the dead-letter")
}

// copySearchFrom is where a search for a copy with no id in the log
// starts: a minute before the intent's time (the operator's clock).
func copySearchFrom(in audit.Entry) int64 {
	at, err := time.Parse(time.RFC3339Nano, in.Time)
	if err != nil {
		return 0
	}
	return at.Add(-time.Minute).UnixMilli()
}

// Target names what the write was on, for a table: the key, or the
// entry's stream, group and id.
func (c AppliedCheck) Target() string {
	if c.Entry == nil {
		return c.Key
	}
	return c.Entry.Stream + " " + c.Entry.Group + " " + c.Entry.ID
}

// EntryReapply is the command (after "idemctl") and its flags, name and
// value in turn, that re-apply a lost pending-entry write through the
// guarded path: planned afresh from the entry as it is, shown, confirmed;
// the entry's id goes last. ok is false for a record write and an undo.
func (c AppliedCheck) EntryReapply() (name string, flags []string, ok bool) {
	ea := c.Intent.Entry
	if ea == nil || c.Action == write.KindUndo {
		return "", nil, false
	}
	flags = []string{"stream", string(ea.Stream), "group", string(ea.Group)}
	switch c.Action {
	case write.KindRetry:
		flags = append(flags, "mode", string(ea.Mode))
		if ea.Mode != write.RetryRedeliver {
			flags = append(flags, "to", string(ea.To))
		}
	case write.KindDeadLetter:
		flags = append(flags, "dead-letter", string(ea.DeadLetter))
	}
	return "streams " + string(c.Action), append(flags, "reason", "re-applied: "+c.Reason), true
}
