package actions

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
)

// maxDeadLetterFields bounds the entries a dead-letter copies (field and
// value pairs): the script passes them to one XADD.
const maxDeadLetterFields = 1000

// entryPlan is what a pending-entry plan carries besides its Request.
type entryPlan struct {
	req  EntryRequest
	read entryRead
	op   string // the script's op (see casEntry)
	to   string // the consumer the entry goes to (a retry, an undo)
}

// entryRead is a pending entry as the read script found it.
type entryRead struct {
	status     string // pending, not_pending, no_stream, nogroup
	consumer   string
	idleMs     int64
	deliveries int64
	nowMs      int64
	dlqType    string
	present    bool
	fields     int
	bytes      int64
	sha1       string
}

var entryIDPattern = regexp.MustCompile(`^[0-9]{1,20}-[0-9]{1,20}$`)

// PlanEntry reads the pending entry and builds the guarded write for req:
// a Plan the executor's ApplyAll runs like any record write, alone or
// among record plans.
func (e *Executor) PlanEntry(ctx context.Context, req EntryRequest) (*Plan, error) {
	if req.By == "" {
		req.By = e.Identity.OSUser
	}
	p, err := buildEntryPlan(ctx, e.Client, req, e.Identity.RedisUser)
	if err == nil && p.Refused == "" {
		p.UndoNote = p.entry.undoNote()
	}
	return p, err
}

func buildEntryPlan(ctx context.Context, c redis.UniversalClient, req EntryRequest, user string) (*Plan, error) {
	if err := req.check(); err != nil {
		return nil, err
	}
	if req.Kind == write.KindRetry && req.Mode == "" {
		req.Mode = write.RetryClaim
	}
	ep := &entryPlan{req: req}
	p := &Plan{Request: Request{Kind: req.Kind, Key: req.Stream, Reason: req.Reason, By: req.By, Evidence: req.Evidence},
		planned: time.Now(), entry: ep}
	if why := req.unused(c); why != "" {
		p.Refused, p.Outcome = why, write.Refused
		return p, nil
	}
	rd, err := readEntryState(ctx, c, req)
	if err != nil && (strings.HasPrefix(err.Error(), "NOPERM") || scriptACLRefusal(err.Error())) {
		// the ACL refuses even the read: a refusal naming the rights, as a
		// refused write is, not a failed run
		p.Refused, p.Outcome = "reading the pending entry: "+explainEntry(err, user), write.Refused
		return p, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the pending entry: %s", explainEntry(err, user))
	}
	ep.read, p.nowMs = rd, rd.nowMs
	p.Before = rd.snapshot()
	if why, o := ep.refusal(); why != "" {
		p.Refused, p.Outcome = why, o
		return p, nil
	}
	ep.compile(p)
	return p, nil
}

// check refuses a request the faces should never send.
func (r EntryRequest) check() error {
	switch {
	case strings.TrimSpace(r.Reason) == "":
		return errors.New("a reason is required for every write")
	case r.Stream == "" || r.Group == "":
		return errors.New("a pending-entry write needs the stream and the consumer group")
	case !entryIDPattern.MatchString(r.ID):
		return fmt.Errorf("%q is not a stream entry id (MS-SEQ, as XPENDING prints it)", inspect.Sanitize(r.ID))
	}
	_, err := ParseEntryKind(string(r.Kind))
	return err
}

// unused refuses options the action would drop, and a dead-letter stream
// a cluster cannot write in the same script.
func (r EntryRequest) unused(c redis.UniversalClient) string {
	switch {
	case r.Kind != write.KindRetry && r.Mode != "":
		return "a retry mode applies to retry only; drop it"
	case r.Mode != write.RetryClaim && r.Mode != write.RetryClaimJustID && r.Mode != write.RetryRedeliver && r.Kind == write.KindRetry:
		return fmt.Sprintf("unknown retry mode %q (claim, claim-justid, redeliver)", inspect.Sanitize(string(r.Mode)))
	case r.RecoveryConsumer != "" && (r.Kind != write.KindRetry || r.Mode == write.RetryRedeliver):
		return "a recovery consumer applies to a claiming retry only; drop it"
	case r.Kind == write.KindRetry && r.Mode != write.RetryRedeliver && r.RecoveryConsumer == "":
		return "a claiming retry needs the recovery consumer to claim the entry for"
	case r.DeadLetter != "" && r.Kind != write.KindDeadLetter:
		return "a dead-letter stream applies to dead-letter only; drop it"
	case r.Kind == write.KindDeadLetter && r.DeadLetter == "":
		return "dead-letter needs the dead-letter stream to copy the entry to"
	case r.Kind == write.KindDeadLetter && r.DeadLetter == r.Stream:
		return "the dead-letter stream must not be the stream itself"
	}
	if _, cluster := c.(*redis.ClusterClient); cluster && r.Kind == write.KindDeadLetter && keySlot(r.DeadLetter) != keySlot(r.Stream) {
		return fmt.Sprintf("in a cluster the dead-letter stream must share the stream's slot, so one script writes both: use a hash tag (dead_letter: %q for stream %q)",
			inspect.Sanitize(suggestDLQ(r.Stream)), inspect.Sanitize(r.Stream))
	}
	return ""
}

// readEntryState reads the entry in one read-only call.
func readEntryState(ctx context.Context, c redis.UniversalClient, req EntryRequest) (entryRead, error) {
	keys := []string{req.Stream}
	if req.DeadLetter != "" {
		keys = append(keys, req.DeadLetter)
	}
	reply, err := runReadOnly(ctx, c, readEntry, readEntryPlain, keys, req.Group, req.ID)
	if err != nil {
		return entryRead{}, err
	}
	if len(reply) != 10 {
		return entryRead{}, fmt.Errorf("unexpected reply from the pending-entry read (%d parts)", len(reply))
	}
	num := func(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }
	return entryRead{status: reply[0], consumer: reply[1], idleMs: num(reply[2]), deliveries: num(reply[3]), nowMs: num(reply[4]),
		dlqType: reply[5], present: reply[6] == "1", fields: int(num(reply[7])), bytes: num(reply[8]), sha1: reply[9]}, nil
}

// snapshot is the entry as a plan's before or after shows it: pending to
// a consumer with a delivery count, or not pending (Exists false).
func (r entryRead) snapshot() write.Snapshot {
	if r.status != "pending" {
		return write.Snapshot{TTLms: -2}
	}
	return pendingSnapshot(r.consumer, r.deliveries)
}

func pendingSnapshot(consumer string, deliveries int64) write.Snapshot {
	return write.Snapshot{Exists: true, Type: "pending", State: "pending", TTLms: -1,
		Fields: map[string]string{"consumer": consumer, "deliveries": strconv.FormatInt(deliveries, 10)}}
}

// refusal says why the entry as read cannot take the write.
func (ep *entryPlan) refusal() (string, write.Outcome) {
	r, q := ep.read, ep.req
	switch r.status {
	case "no_stream":
		if r.consumer == "none" {
			return "the stream does not exist", write.NotFound
		}
		return fmt.Sprintf("the key is a %s, not a stream", inspect.Sanitize(r.consumer)), write.Refused
	case "nogroup":
		return "no consumer group " + strconv.Quote(inspect.Sanitize(q.Group)) + " on this stream (" + inspect.Line(r.consumer) + ")", write.NotFound
	case "not_pending":
		return "the entry is not pending in group " + strconv.Quote(inspect.Sanitize(q.Group)) + " (acknowledged, or never delivered)", write.NotFound
	}
	if q.Saw != nil {
		if why := seenDrift(*q.Saw, r.consumer, r.deliveries); why != "" {
			return "the entry changed since you saw it: " + why + "; nothing written", write.Conflict
		}
	}
	switch {
	case q.Kind == write.KindRetry && q.Mode != write.RetryRedeliver && q.RecoveryConsumer == r.consumer:
		return "the entry is already pending to " + strconv.Quote(inspect.Sanitize(r.consumer)) + ": retry it with mode redeliver", write.Refused
	case q.Kind != write.KindAck && !r.present:
		return "the entry was trimmed from the stream (only its pending-list slot is left): nothing to " + string(q.Kind) + "; ack it to clear the slot", write.Refused
	case q.Kind == write.KindDeadLetter && r.dlqType != "stream" && r.dlqType != "none":
		return fmt.Sprintf("the dead-letter key %q is a %s, not a stream", inspect.Sanitize(q.DeadLetter), inspect.Sanitize(r.dlqType)), write.Refused
	case q.Kind == write.KindDeadLetter && r.fields > maxDeadLetterFields:
		return fmt.Sprintf("the entry has %d fields, more than idemctl dead-letters (%d): move it by hand", r.fields, maxDeadLetterFields), write.Refused
	}
	return "", ""
}

// seenDrift says how an entry read now differs from what was seen.
func seenDrift(saw EntrySeen, consumer string, deliveries int64) string {
	var out []string
	if saw.Consumer != consumer {
		out = append(out, fmt.Sprintf("claimed by %q (was %q)", inspect.Sanitize(consumer), inspect.Sanitize(saw.Consumer)))
	}
	if saw.Deliveries != deliveries {
		out = append(out, fmt.Sprintf("delivered again (deliveries %d → %d)", saw.Deliveries, deliveries))
	}
	return strings.Join(out, ", ")
}
