package actions

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/actions/write"
)

const testDLQ = "{orders}:dlq"

// checkEntries is check-applied over every applied write in r's log.
func (r *rig) checkEntries() []AppliedCheck {
	r.t.Helper()
	return CheckApplied(r.t.Context(), r.c, IndexUndo(r.entries()).LatestApplied(SinceFilter(time.Time{})), nil)
}

// statuses is each check as "id status: detail", oldest write first.
func statuses(cs []AppliedCheck) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Entry.ID + " " + c.Status + ": " + c.Detail
	}
	return out
}

func wantChecks(t *testing.T, cs []AppliedCheck, want ...string) {
	t.Helper()
	got := statuses(cs)
	if len(got) != len(want) {
		t.Fatalf("%d checks, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if w, ok := strings.CutSuffix(want[i], "…"); ok && strings.HasPrefix(got[i], w) {
			continue
		}
		if got[i] != want[i] {
			t.Errorf("check %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
}

// Each kind of entry write, checked right after it (kept), then after the
// stream is put back as it was before the writes, group and pending list
// and delivery times with it (RESTORE of its DUMP: what a failover to a
// replica that never had the writes leaves): lost, each with the command
// that re-applies it.
func TestEntryCheckAppliedKeptThenLost(t *testing.T) {
	r := sharedRig(t)
	ctx := t.Context()
	ids := seedPending(t, r.c, testStream, 4)
	for _, id := range ids {
		setIdle(t, r.c, id, 40*time.Second) // deliveries 2
	}
	dump, err := r.c.Dump(ctx, testStream).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []EntryRequest{
		{Kind: write.KindRetry, ID: ids[0], RecoveryConsumer: recovery},
		{Kind: write.KindAck, ID: ids[1]},
		{Kind: write.KindDeadLetter, ID: ids[2], DeadLetter: testDLQ},
		{Kind: write.KindRetry, ID: ids[3], Mode: write.RetryRedeliver},
	} {
		if res := r.apply(r.planEntry(req)); res.Outcome != write.Applied {
			t.Fatalf("%s: %+v", req.Kind, res)
		}
	}
	cs := r.checkEntries()
	wantChecks(t, cs, ids[0]+" kept: ", ids[1]+" kept: ", ids[2]+" kept: ", ids[3]+" kept: ")
	if cs[0].Key != testStream || cs[0].Target() != testStream+" billing "+ids[0] || cs[0].Action != write.KindRetry {
		t.Fatalf("check names %q %q %s", cs[0].Key, cs[0].Target(), cs[0].Action)
	}

	if err := r.c.RestoreReplace(ctx, testStream, 0, dump).Err(); err != nil {
		t.Fatal(err)
	}
	r.c.Del(ctx, testDLQ)
	if pe := pendingOf(t, r.c, testStream, ids[1]); pe == nil || pe.Consumer != worker || pe.RetryCount != 2 || pe.Idle < 40*time.Second {
		t.Fatalf("the restore did not put the pending list back: %+v", pe)
	}
	cs = r.checkEntries()
	taken := ": the write was taken back (a failover to a replica that never had it)"
	wantChecks(t, cs,
		ids[0]+` lost: pending again to the original consumer "worker-1" with 2 deliveries, as before the write`+taken,
		ids[1]+` lost: pending again to "worker-1" with 2 deliveries, as before the ack`+taken,
		ids[2]+` lost: pending again to "worker-1" with 2 deliveries, as before the dead-letter`+taken,
		ids[3]+` lost: pending to "worker-1", idle since …`)
	if !strings.HasSuffix(cs[3].Detail, "before the write reset it"+taken) {
		t.Fatalf("redeliver: %s", cs[3].Detail)
	}
	var cmds []string
	for _, c := range cs {
		name, flags, ok := c.EntryReapply()
		if !ok {
			t.Fatalf("%s: no re-apply command", c.Action)
		}
		cmds = append(cmds, name+" "+strings.Join(flags, " "))
	}
	want := []string{
		"streams retry stream {orders} group billing mode claim to recovery reason re-applied: test: retry",
		"streams ack stream {orders} group billing reason re-applied: test: ack",
		"streams dead-letter stream {orders} group billing dead-letter {orders}:dlq reason re-applied: test: dead-letter",
		"streams retry stream {orders} group billing mode redeliver reason re-applied: test: retry",
	}
	if fmt.Sprint(cmds) != fmt.Sprint(want) {
		t.Fatalf("re-apply:\n%s", strings.Join(cmds, "\n"))
	}
}

// What the application does after a write is "changed", each told apart:
// the recovery consumer processed a retried entry (acked), another
// consumer claimed one, the recovery consumer was delivered it again; a
// dead-letter's copy deleted since is "gone"; the stream gone too. Two
// writes of one entry: only the later one is checked.
func TestEntryCheckAppliedChanged(t *testing.T) {
	r := sharedRig(t)
	ctx := t.Context()
	ids := seedPending(t, r.c, testStream, 5)
	for _, req := range []EntryRequest{
		{Kind: write.KindRetry, ID: ids[0], RecoveryConsumer: "first"},
		{Kind: write.KindRetry, ID: ids[0], RecoveryConsumer: recovery},
		{Kind: write.KindRetry, ID: ids[1], RecoveryConsumer: recovery},
		{Kind: write.KindRetry, ID: ids[2], RecoveryConsumer: recovery},
		{Kind: write.KindDeadLetter, ID: ids[3], DeadLetter: testDLQ},
		{Kind: write.KindAck, ID: ids[4]},
	} {
		if res := r.apply(r.planEntry(req)); res.Outcome != write.Applied {
			t.Fatalf("%s: %+v", req.Kind, res)
		}
	}
	r.c.XAck(ctx, testStream, testGroup, ids[0])
	r.c.XClaim(ctx, &redis.XClaimArgs{Stream: testStream, Group: testGroup, Consumer: "thief", Messages: []string{ids[1]}})
	r.c.XClaim(ctx, &redis.XClaimArgs{Stream: testStream, Group: testGroup, Consumer: recovery, Messages: []string{ids[2]}})
	_, out := r.lastWrite(testStream, write.Applied)
	es := r.entries()
	dl := es[len(es)-3] // the dead-letter's outcome
	if dl.Action != write.KindDeadLetter || dl.Entry.DeadLetterID == "" || out.Action != write.KindAck {
		t.Fatalf("log: %+v", dl)
	}
	r.c.XDel(ctx, testDLQ, dl.Entry.DeadLetterID)
	wantChecks(t, r.checkEntries(),
		ids[0]+` changed: acknowledged since: processed by the consumer the write handed it to ("recovery"), as it should be`,
		ids[1]+` changed: claimed by another consumer since: "thief" (deliveries 3); nothing to re-apply`,
		ids[2]+` changed: delivered again to "recovery" since (deliveries 2 → 3): it is being processed`,
		ids[3]+` gone: acknowledged, but its copy is no longer in "{orders}:dlq" (trimmed or deleted since)`,
		ids[4]+" kept: ")
	r.c.Del(ctx, testStream)
	for _, c := range r.checkEntries() {
		if c.Status != CheckGone || c.Detail != "the stream no longer exists" {
			t.Fatalf("stream deleted: %s %s", c.Status, c.Detail)
		}
	}
}

// undo --since over two retries of one entry (to one recovery consumer,
// then to another) and a retry of another entry of the stream: the newer
// retry's undo runs first, the older one's is planned against the entry
// as that undo restores it, and the entry ends as before the retries —
// its consumer, delivery count and idle time. check-applied then finds
// each undo kept.
func TestEntryUndoSinceTwoRetries(t *testing.T) {
	r := sharedRig(t)
	ids := seedPending(t, r.c, testStream, 2)
	setIdle(t, r.c, ids[0], 50*time.Second) // deliveries 2
	since, start := time.Now().Add(-time.Second), time.Now()
	for _, req := range []EntryRequest{
		{Kind: write.KindRetry, ID: ids[0], RecoveryConsumer: recovery},
		{Kind: write.KindRetry, ID: ids[1], RecoveryConsumer: recovery},
		{Kind: write.KindRetry, ID: ids[0], RecoveryConsumer: "recovery-2"},
	} {
		if res := r.apply(r.planEntry(req)); res.Outcome != write.Applied {
			t.Fatalf("%+v: %+v", req, res)
		}
	}
	if pe := pendingOf(t, r.c, testStream, ids[0]); pe.Consumer != "recovery-2" || pe.RetryCount != 4 {
		t.Fatalf("after the retries: %+v", pe)
	}
	x := IndexUndo(r.entries())
	ts := x.Since(since)
	x.NewestFirst(ts)
	plans, rs := r.undoTargets(x, nil, ts)
	for i, res := range rs {
		if res.Outcome != write.Applied {
			t.Fatalf("undo %d (%s): %+v / refused %q", i, plans[i].Reverts(), res, plans[i].Refused)
		}
	}
	if got := fmt.Sprint(plans[2].Changes[:2]); got != "[{consumer recovery worker-1} {deliveries 3 2}]" {
		t.Fatalf("the older undo was not planned from the newer one's result: %s", got)
	}
	pe := pendingOf(t, r.c, testStream, ids[0])
	want := 50*time.Second + time.Since(start)
	if pe.Consumer != worker || pe.RetryCount != 2 || pe.Idle < want-time.Second || pe.Idle > want+time.Second {
		t.Fatalf("after undo: %+v, want idle ~%s", pe, want)
	}
	if pe := pendingOf(t, r.c, testStream, ids[1]); pe.Consumer != worker || pe.RetryCount != 1 {
		t.Fatalf("the other entry after undo: %+v", pe)
	}
	if got := consumersPending(t, r.c, testStream); got[worker] != 2 || got[recovery] != 0 || got["recovery-2"] != 0 {
		t.Fatalf("XINFO CONSUMERS: %v", got)
	}
	x = IndexUndo(r.entries())
	if left := x.Since(since); len(left) != 0 {
		t.Fatalf("after undoing everything since, %d writes still stand", len(left))
	}
	cs := r.checkEntries()
	if len(cs) != 2 {
		t.Fatalf("%d checks after the undo, want one per entry", len(cs))
	}
	for _, c := range cs {
		if c.Action != write.KindUndo || c.Status != CheckKept {
			t.Fatalf("check-applied after the undo: %s %s %s", c.Action, c.Status, c.Detail)
		}
	}
	r.verified()
}
