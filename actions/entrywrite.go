package actions

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

// entryRights is what the pending-entry scripts need beyond reading.
const entryRights = "+evalsha +eval +script|load and the commands the scripts call (+xpending +xrange +time, +xclaim for retry and undo, +xack for ack and dead-letter, +xadd on the dead-letter stream), with write access to the keys"

// writeEntry runs a pending-entry plan's script whose intent is durable;
// an uncertain failure is settled by a re-read, never assumed.
func (e *Executor) writeEntry(ctx context.Context, via processor, p *Plan, res Result) Result {
	ep := p.entry
	reply, err := p.script.run(ctx, via, ep.keys(), p.args...).StringSlice()
	switch {
	case err == nil:
		res.Outcome, res.Detail, res.ServerMs = ep.parseReply(reply, e.Identity.RedisUser)
		if res.Outcome == write.Applied {
			res.entry = ep.left(reply)
		}
	case isServerError(err):
		// The script checks every command against the ACL before any
		// write, so a refusal here wrote nothing.
		res.Outcome, res.Detail = write.Failed, explainEntry(err, e.Identity.RedisUser)
		if strings.HasPrefix(err.Error(), "NOPERM") || scriptACLRefusal(err.Error()) {
			res.Outcome = write.Refused
		}
	default:
		o, d, cp := e.rereadEntry(ctx, p)
		res.Outcome, res.Detail = o, "uncertain ("+units.OneLine(err.Error())+"); "+d
		if o == write.Applied && cp != "" {
			res.entry = ep.audit()
			res.entry.DeadLetterID = cp
		}
	}
	return res
}

// parseReply reads casEntry's answer.
func (ep *entryPlan) parseReply(r []string, user string) (write.Outcome, string, int64) {
	if len(r) == 0 {
		return write.Unknown, "empty reply from the script", 0
	}
	at := func(i int) string {
		if i < len(r) {
			return r[i]
		}
		return ""
	}
	switch r[0] {
	case "applied":
		ms, _ := strconv.ParseInt(at(1), 10, 64)
		return write.Applied, "", ms
	case "not_found":
		return write.NotFound, "the stream or its group no longer exists (" + inspect.Line(at(1)) + ")", 0
	case "noperm":
		return write.Refused, fmt.Sprintf("NOPERM: the ACL user %q may not run %s on these keys; nothing was written; the pending-entry role needs %s",
			userOr(user), inspect.Sanitize(at(1)), entryRights), 0
	case "conflict":
		var why string
		switch at(1) {
		case "acked":
			why = "it was acknowledged meanwhile (no longer pending)"
		case "consumer":
			why = fmt.Sprintf("it was claimed by %q (deliveries %s)", inspect.Sanitize(at(2)), inspect.Sanitize(at(3)))
		case "deliveries":
			why = fmt.Sprintf("it was delivered again (deliveries %d → %s)", ep.read.deliveries, inspect.Sanitize(at(2)))
		case "trimmed":
			why = "it was trimmed from the stream"
		default:
			why = inspect.Sanitize(at(1)) + " changed"
		}
		return write.Conflict, "the entry changed since it was read: " + why + "; nothing was written", 0
	}
	return write.Unknown, "unexpected reply " + inspect.Sanitize(strings.Join(r, " ")), 0
}

// left is the entry as an applied write left it, for the outcome line.
func (ep *entryPlan) left(r []string) *write.EntryAudit {
	a := ep.audit()
	if len(r) >= 5 {
		if r[2] != "" {
			d, _ := strconv.ParseInt(r[3], 10, 64)
			a.Left = &write.EntrySeenAudit{Consumer: write.Name(r[2]), Deliveries: d}
		}
		a.DeadLetterID = r[4]
	}
	return a
}

// rereadEntry compares the entry now with the plan's before and after;
// for a dead-letter no longer pending, it looks for the copy (its id is
// the third answer, when found).
func (e *Executor) rereadEntry(ctx context.Context, p *Plan) (write.Outcome, string, string) {
	ep := p.entry
	for attempt := range 5 {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * 300 * time.Millisecond)
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
		now, err := readEntryState(rctx, e.Client, ep.req)
		var cp copyFound
		if err == nil && ep.req.Kind == write.KindDeadLetter && now.status == "not_pending" {
			// casEntry's XADD id is the server's clock at the write, or
			// later: the search starts a second before the plan read it.
			cp, err = findCopy(rctx, e.Client, ep.audit(), "", ep.read.nowMs-1000)
		}
		cancel()
		if err != nil {
			continue
		}
		o, d := ep.settled(now, cp, time.Since(p.planned))
		return o, d, cp.id
	}
	return write.Unknown, "the entry could not be re-read: check it by hand (XPENDING)", ""
}

// settled says what an entry re-read after an uncertain write shows (cp:
// a dead-letter's copy, when it is no longer pending).
func (ep *entryPlan) settled(now entryRead, cp copyFound, elapsed time.Duration) (write.Outcome, string) {
	r := ep.read
	same := now.status == "pending" && now.consumer == r.consumer && now.deliveries == r.deliveries
	if ep.req.Kind != write.KindRetry {
		return ep.settledAck(now, cp, same)
	}
	switch {
	case ep.op == string(write.RetryRedeliver) && same:
		if now.idleMs <= elapsed.Milliseconds() {
			return write.Applied, "a re-read shows its idle time reset: the write was applied"
		}
		return write.NotApplied, "a re-read shows it unchanged: the write did not happen"
	case same:
		return write.NotApplied, "a re-read shows it unchanged: the write did not happen"
	case now.status == "pending" && now.consumer == ep.to:
		return write.Applied, "a re-read shows it pending to " + strconv.Quote(inspect.Sanitize(ep.to)) + ": the write was applied"
	}
	return write.Unknown, "a re-read shows neither the entry as read nor as planned: check it by hand (XPENDING)"
}

// settledAck settles an ack or a dead-letter. An acknowledged entry never
// becomes pending again, so pending means the write did not happen; not
// pending, an ack's effect is there (a concurrent XACK by its consumer
// cannot be told from it, and leaves the same), and a dead-letter's is
// there only with its copy.
func (ep *entryPlan) settledAck(now entryRead, cp copyFound, same bool) (write.Outcome, string) {
	dlq := strconv.Quote(inspect.Sanitize(ep.req.DeadLetter))
	switch {
	case same:
		return write.NotApplied, "a re-read shows it still pending as read: the write did not happen"
	case now.status == "pending":
		return write.NotApplied, fmt.Sprintf("a re-read shows it still pending (to %q, deliveries %d): the write did not happen",
			inspect.Sanitize(now.consumer), now.deliveries)
	case now.status != "not_pending":
		return write.Unknown, "a re-read finds the stream or its group gone: check it by hand"
	case ep.req.Kind == write.KindAck:
		return write.Applied, "a re-read shows it acknowledged: the write was applied"
	case cp.id != "":
		return write.Applied, "a re-read shows it acknowledged and its copy " + cp.id + " in " + dlq + ": the write was applied"
	case cp.complete:
		return write.NotApplied, "a re-read shows it acknowledged but no copy in " + dlq + ": acknowledged by someone else; this write did not happen"
	}
	return write.Unknown, fmt.Sprintf("a re-read shows it acknowledged, and its copy is not among the %d newest entries of %s: check the dead-letter stream by hand", maxCopyScan, dlq)
}

// explainEntry turns a server refusal into what the operator can do.
func explainEntry(err error, user string) string {
	msg := units.OneLine(err.Error())
	switch {
	case strings.HasPrefix(msg, "NOPERM"):
		return fmt.Sprintf("%s — the ACL user %q may not run the pending-entry scripts; the role needs %s", msg, userOr(user), entryRights)
	case scriptACLRefusal(msg):
		return fmt.Sprintf("NOPERM (in script): %s — the ACL user %q may run the scripts but not every command they call; the role needs %s", msg, userOr(user), entryRights)
	}
	return explain(err, user)
}

func userOr(user string) string {
	if user == "" {
		return "default"
	}
	return user
}
