package actions

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/actions/write"
)

const (
	testStream = "{orders}"
	testGroup  = "billing"
	worker     = "worker-1"
	recovery   = "recovery"
)

// seedPending adds n entries (fields given, or n=<i>) to stream and
// delivers them to consumer in group: each is pending, delivered once.
func seedPending(t *testing.T, c *redis.Client, stream string, n int, fields ...any) []string {
	t.Helper()
	ctx := t.Context()
	if err := c.XGroupCreateMkStream(ctx, stream, testGroup, "0").Err(); err != nil && !strings.Contains(err.Error(), "BUSYGROUP") {
		t.Fatal(err)
	}
	var ids []string
	for i := range n {
		vals := fields
		if len(vals) == 0 {
			vals = []any{"n", fmt.Sprint(i)}
		}
		id, err := c.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: vals}).Result()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: testGroup, Consumer: worker, Streams: []string{stream, ">"}, Count: int64(n)}).Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// pendingOf is XPENDING of one entry (nil: not pending).
func pendingOf(t *testing.T, c *redis.Client, stream, id string) *redis.XPendingExt {
	t.Helper()
	ps, err := c.XPendingExt(t.Context(), &redis.XPendingExtArgs{Stream: stream, Group: testGroup, Start: id, End: id, Count: 1}).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) == 0 {
		return nil
	}
	return &ps[0]
}

// consumersPending is XINFO CONSUMERS: each consumer's pending count.
func consumersPending(t *testing.T, c *redis.Client, stream string) map[string]int64 {
	t.Helper()
	cs, err := c.XInfoConsumers(t.Context(), stream, testGroup).Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, x := range cs {
		out[x.Name] = x.Pending
	}
	return out
}

// setIdle sets an entry's idle time under its consumer (XCLAIM IDLE,
// which also counts a delivery).
func setIdle(t *testing.T, c *redis.Client, id string, d time.Duration) {
	t.Helper()
	if err := c.Do(t.Context(), "XCLAIM", testStream, testGroup, worker, 0, id, "IDLE", d.Milliseconds()).Err(); err != nil {
		t.Fatal(err)
	}
}

func (r *rig) planEntry(req EntryRequest) *Plan {
	r.t.Helper()
	if req.Reason == "" {
		req.Reason = "test: " + string(req.Kind)
	}
	if req.Stream == "" {
		req.Stream = testStream
	}
	if req.Group == "" {
		req.Group = testGroup
	}
	p, err := r.ex.PlanEntry(r.t.Context(), req)
	if err != nil {
		r.t.Fatalf("plan %s %s: %v", req.Kind, req.ID, err)
	}
	return p
}

// verified checks the audit log's chain holds.
func (r *rig) verified() {
	r.t.Helper()
	rep, err := audit.Verify(r.audit, nil)
	if err != nil || rep.Break != nil {
		r.t.Fatalf("audit verify: %v %+v", err, rep.Break)
	}
}

// A claiming retry hands the entry to the recovery consumer, its delivery
// count up by one; the recovery consumer reads it from its own pending
// list exactly once; intent and outcome are audited with the entry.
func TestEntryRetryClaim(t *testing.T) {
	r := sharedRig(t)
	ids := seedPending(t, r.c, testStream, 2)
	p := r.planEntry(EntryRequest{Kind: write.KindRetry, ID: ids[0], RecoveryConsumer: recovery, Saw: &EntrySeen{Consumer: worker, Deliveries: 1}})
	if p.Refused != "" || p.UndoNote != "" || p.Entry().ID != ids[0] {
		t.Fatalf("plan: %q %q %+v", p.Refused, p.UndoNote, p.Entry())
	}
	if got := fmt.Sprint(p.Changes[:2]); got != "[{consumer worker-1 recovery} {deliveries 1 2}]" {
		t.Fatalf("changes %s", got)
	}
	res := r.apply(p)
	if res.Outcome != write.Applied || res.AuditID == "" {
		t.Fatalf("apply: %+v", res)
	}
	pe := pendingOf(t, r.c, testStream, ids[0])
	if pe == nil || pe.Consumer != recovery || pe.RetryCount != 2 {
		t.Fatalf("XPENDING after: %+v", pe)
	}
	if got := consumersPending(t, r.c, testStream); got[worker] != 1 || got[recovery] != 1 {
		t.Fatalf("XINFO CONSUMERS: %v", got)
	}
	// The recovery consumer's loop: its own pending list from 0.
	read := func(from string) []redis.XMessage {
		s, err := r.c.XReadGroup(t.Context(), &redis.XReadGroupArgs{Group: testGroup, Consumer: recovery, Streams: []string{testStream, from}}).Result()
		if err != nil {
			t.Fatal(err)
		}
		return s[0].Messages
	}
	if ms := read("0"); len(ms) != 1 || ms[0].ID != ids[0] || ms[0].Values["n"] != "0" {
		t.Fatalf("recovery's pending list: %+v", ms)
	}
	if ms := read(ids[0]); len(ms) != 0 {
		t.Fatalf("read past it, the recovery consumer gets more: %+v", ms)
	}
	in, out := r.lastWrite(testStream, write.Applied)
	if in.Entry == nil || in.Entry.ID != ids[0] || in.Entry.Consumer != worker || in.Entry.Deliveries != 1 || in.Entry.To != recovery ||
		in.Entry.Group != testGroup || in.Entry.Stream != testStream || in.Entry.Mode != write.RetryClaim || in.Undoable == nil || !*in.Undoable {
		t.Fatalf("intent: %+v %+v", in, in.Entry)
	}
	if out.Entry == nil || out.Entry.Left == nil || out.Entry.Left.Consumer != recovery || out.Entry.Left.Deliveries != 2 {
		t.Fatalf("outcome: %+v", out.Entry)
	}
	r.verified()
}

func TestEntryRetryModes(t *testing.T) {
	r := sharedRig(t)
	ids := seedPending(t, r.c, testStream, 2)
	for _, id := range ids {
		setIdle(t, r.c, id, 40*time.Second)
	}
	res := r.apply(r.planEntry(EntryRequest{Kind: write.KindRetry, ID: ids[0], Mode: write.RetryClaimJustID, RecoveryConsumer: recovery}))
	// XCLAIM (not JUSTID) in the seeding counted a delivery: 2.
	if pe := pendingOf(t, r.c, testStream, ids[0]); res.Outcome != write.Applied || pe.Consumer != recovery || pe.RetryCount != 2 || pe.Idle > time.Second {
		t.Fatalf("claim-justid: %+v %+v", res, pe)
	}
	res = r.apply(r.planEntry(EntryRequest{Kind: write.KindRetry, ID: ids[1], Mode: write.RetryRedeliver}))
	if pe := pendingOf(t, r.c, testStream, ids[1]); res.Outcome != write.Applied || pe.Consumer != worker || pe.RetryCount != 2 || pe.Idle > time.Second {
		t.Fatalf("redeliver: %+v %+v", res, pe)
	}
	for _, req := range []EntryRequest{
		{Kind: write.KindRetry, ID: ids[1]},                              // no recovery consumer
		{Kind: write.KindRetry, ID: ids[1], RecoveryConsumer: worker},    // already its consumer
		{Kind: write.KindAck, ID: ids[1], Mode: write.RetryRedeliver},    // a mode on an ack
		{Kind: write.KindDeadLetter, ID: ids[1]},                         // no dead-letter stream
		{Kind: write.KindDeadLetter, ID: ids[1], DeadLetter: testStream}, // itself
		{Kind: write.KindRetry, ID: ids[1], Mode: write.RetryRedeliver, RecoveryConsumer: recovery},
	} {
		if p := r.planEntry(req); p.Refused == "" || p.Outcome != write.Refused {
			t.Errorf("%+v: planned (%q)", req, p.Refused)
		}
	}
}

// An ack carries the verify hook's evidence into the audit log, and says
// before it runs that it cannot be undone.
func TestEntryAck(t *testing.T) {
	r := sharedRig(t)
	ids := seedPending(t, r.c, testStream, 1)
	ev := &write.Evidence{Verdict: "done", Ref: "inv-7", Hook: "/usr/local/bin/check", TookMs: 12}
	p := r.planEntry(EntryRequest{Kind: write.KindAck, ID: ids[0], Evidence: ev})
	if p.Refused != "" || !strings.Contains(p.UndoNote, "cannot put it back") {
		t.Fatalf("plan: %q, undo note %q", p.Refused, p.UndoNote)
	}
	res := r.apply(p)
	if res.Outcome != write.Applied || res.UndoNote == "" || pendingOf(t, r.c, testStream, ids[0]) != nil {
		t.Fatalf("ack: %+v", res)
	}
	if n := r.c.XLen(t.Context(), testStream).Val(); n != 1 {
		t.Fatalf("the ack removed the entry from the stream: XLEN %d", n)
	}
	in, _ := r.lastWrite(testStream, write.Applied)
	if in.Evidence == nil || *in.Evidence != *ev || in.Undoable == nil || *in.Undoable || in.Entry.ID != ids[0] {
		t.Fatalf("intent: %+v evidence %+v", in, in.Evidence)
	}
	// Not pending any more: a second ack is refused, nothing sent.
	if p := r.planEntry(EntryRequest{Kind: write.KindAck, ID: ids[0]}); p.Outcome != write.NotFound || !strings.Contains(p.Refused, "not pending") {
		t.Fatalf("second ack: %+v", p.Refused)
	}
	x := IndexUndo(r.entries())
	if why := x.Undoable(UndoTarget{Intent: in, Outcome: x.outcomes[in.ID]}); !strings.Contains(why, "not undoable") {
		t.Fatalf("undo of an ack: %q", why)
	}
	r.verified()
}

// A hostile entry (control characters, a NUL, a large value, a field
// named like the origin ones) dead-letters byte-exact with its origin;
// dead-lettering it twice lands once; a trimmed entry is refused.
func TestEntryDeadLetter(t *testing.T) {
	r := sharedRig(t)
	big := strings.Repeat("\x00\xff", 150<<10)
	fields := []any{"evil\x1b[31m\r\n", "v\x00\x07\x1b]0;pwned\x07", "big", big, "idemctl.id", "spoofed"}
	ids := seedPending(t, r.c, testStream, 1, fields...)
	dlq := "{orders}:dlq"
	p1 := r.planEntry(EntryRequest{Kind: write.KindDeadLetter, ID: ids[0], DeadLetter: dlq, Reason: "poison \x1b[2J"})
	p2 := r.planEntry(EntryRequest{Kind: write.KindDeadLetter, ID: ids[0], DeadLetter: dlq})
	if p1.Refused != "" || p1.UndoNote == "" {
		t.Fatalf("plan: %q %q", p1.Refused, p1.UndoNote)
	}
	res := r.apply(p1)
	if res.Outcome != write.Applied {
		t.Fatalf("dead-letter: %+v", res)
	}
	_, out := r.lastWrite(testStream, write.Applied)
	if res2 := r.apply(p2); res2.Outcome != write.Conflict || !strings.Contains(res2.Detail, "acknowledged meanwhile") {
		t.Fatalf("second dead-letter: %+v", res2)
	}
	if n := r.c.XLen(t.Context(), dlq).Val(); n != 1 || pendingOf(t, r.c, testStream, ids[0]) != nil {
		t.Fatalf("XLEN dead-letter %d, or still pending", n)
	}
	raw, err := r.c.Do(t.Context(), "XRANGE", dlq, "-", "+").Slice()
	if err != nil {
		t.Fatal(err)
	}
	got := raw[0].([]any)[1].([]any)
	want := append(append([]any{}, fields...), "idemctl.stream", testStream, "idemctl.group", testGroup, "idemctl.id", ids[0],
		"idemctl.consumer", worker, "idemctl.deliveries", "1", "idemctl.reason", "poison \x1b[2J", "idemctl.by", testUser)
	if len(got) != len(want)+2 || got[len(got)-2] != "idemctl.at" {
		t.Fatalf("dead-letter fields: %d, want %d + idemctl.at", len(got), len(want))
	}
	for i, w := range want {
		if got[i] != w {
			t.Fatalf("field %d: %q, want %q", i, clipTest(got[i]), clipTest(w))
		}
	}
	if out.Entry.DeadLetterID != raw[0].([]any)[0] || out.Entry.Bytes < int64(len(big)) || out.Entry.Fields != 3 {
		t.Fatalf("outcome entry: %+v", out.Entry)
	}
	// Trimmed: only its pending slot is left.
	ids = seedPending(t, r.c, testStream, 1)
	r.c.XDel(t.Context(), testStream, ids[0])
	if p := r.planEntry(EntryRequest{Kind: write.KindDeadLetter, ID: ids[0], DeadLetter: dlq}); p.Outcome != write.Refused || !strings.Contains(p.Refused, "trimmed") {
		t.Fatalf("trimmed: %q", p.Refused)
	}
	r.verified()
}

func clipTest(v any) string { return fmt.Sprintf("%.40q", fmt.Sprint(v)) }

// Between plan and apply: another consumer claims it, it is acked, or it
// is delivered again. The script writes nothing and says which.
func TestEntryConflicts(t *testing.T) {
	r := sharedRig(t)
	ctx := t.Context()
	ids := seedPending(t, r.c, testStream, 3)
	for i, tc := range []struct {
		meanwhile func(id string)
		want      string
	}{
		{func(id string) {
			r.c.XClaim(ctx, &redis.XClaimArgs{Stream: testStream, Group: testGroup, Consumer: "thief", Messages: []string{id}})
		}, `claimed by "thief"`},
		{func(id string) { r.c.XAck(ctx, testStream, testGroup, id) }, "acknowledged meanwhile"},
		{func(id string) {
			r.c.XClaim(ctx, &redis.XClaimArgs{Stream: testStream, Group: testGroup, Consumer: worker, Messages: []string{id}})
		}, "delivered again (deliveries 1 → 2)"},
	} {
		p := r.planEntry(EntryRequest{Kind: write.KindRetry, ID: ids[i], RecoveryConsumer: recovery})
		tc.meanwhile(ids[i])
		before := pendingOf(t, r.c, testStream, ids[i])
		res := r.apply(p)
		if res.Outcome != write.Conflict || !strings.Contains(res.Detail, tc.want) {
			t.Fatalf("%d: %+v", i, res)
		}
		if after := pendingOf(t, r.c, testStream, ids[i]); fmt.Sprint(before) != fmt.Sprint(after) && (before == nil) != (after == nil) ||
			after != nil && (after.Consumer != before.Consumer || after.RetryCount != before.RetryCount) {
			t.Fatalf("%d: the entry changed: %+v → %+v", i, before, after)
		}
		r.lastWrite(testStream, write.Conflict)
	}
	// What the operator saw is already stale at planning.
	p := r.planEntry(EntryRequest{Kind: write.KindAck, ID: ids[0], Saw: &EntrySeen{Consumer: worker, Deliveries: 1}})
	if p.Outcome != write.Conflict || !strings.Contains(p.Refused, `claimed by "thief"`) {
		t.Fatalf("stale saw: %q", p.Refused)
	}
	r.verified()
}

// Undo of a retry puts the entry back with its consumer, delivery count
// and idle time (as if never claimed); a second undo conflicts.
func TestEntryUndoRetry(t *testing.T) {
	r := sharedRig(t)
	ctx := t.Context()
	ids := seedPending(t, r.c, testStream, 1)
	setIdle(t, r.c, ids[0], 50*time.Second)
	start := time.Now()
	res := r.apply(r.planEntry(EntryRequest{Kind: write.KindRetry, ID: ids[0], RecoveryConsumer: recovery}))
	if res.Outcome != write.Applied {
		t.Fatalf("retry: %+v", res)
	}
	x := IndexUndo(r.entries())
	tg, err := x.Lookup(res.AuditID)
	if err != nil {
		t.Fatal(err)
	}
	plans, err := r.ex.PlanUndo(ctx, x, []UndoTarget{tg}, nil, "test: undo")
	if err != nil || plans[0].Refused != "" || plans[0].UndoNote == "" {
		t.Fatalf("plan undo: %v %+v", err, plans[0])
	}
	ur := r.apply(plans[0])
	if ur.Outcome != write.Applied {
		t.Fatalf("undo: %+v", ur)
	}
	pe := pendingOf(t, r.c, testStream, ids[0])
	want := 50*time.Second + time.Since(start)
	if pe.Consumer != worker || pe.RetryCount != 2 || pe.Idle < want-time.Second || pe.Idle > want+time.Second {
		t.Fatalf("after undo: %+v, want idle ~%s", pe, want)
	}
	in, out := r.lastWrite(testStream, write.Applied)
	if in.Action != write.KindUndo || in.Reverts != res.AuditID || out.Entry.Left.Consumer != worker {
		t.Fatalf("undo audit: %+v %+v", in, out.Entry)
	}
	x = IndexUndo(r.entries())
	if why := x.Undoable(tg); !strings.Contains(why, "already reverted") {
		t.Fatalf("second undo: %q", why)
	}
	r.verified()
}
