package actions

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/actions/write"
)

// planEntryDirect plans an entry write over the direct connection and
// leaves a warm pooled connection through the proxy (see planDirect).
func (f *faultRig) planEntryDirect(req EntryRequest) *Plan {
	f.t.Helper()
	ctx := context.Background()
	if err := casEntry.Load(ctx, f.c).Err(); err != nil {
		f.t.Fatal(err)
	}
	req.Stream, req.Group, req.Reason, req.By = testStream, testGroup, "fault test", testUser
	p, err := buildEntryPlan(ctx, f.c, req, "")
	if err != nil || p.Refused != "" {
		f.t.Fatalf("plan: %v %v", err, p)
	}
	for range 5 {
		if err = f.pc.Ping(ctx).Err(); err == nil {
			return p
		}
	}
	f.t.Fatal(err)
	return nil
}

// dlqIDs is the dead-letter stream's entry ids, oldest first.
func dlqIDs(t *testing.T, c *redis.Client) []string {
	t.Helper()
	ms, err := c.XRange(t.Context(), testDLQ, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

// An ack or a dead-letter whose request or reply is lost, or whose
// connection is cut right after it ran, is settled by a re-read: pending
// still, not applied; acknowledged, applied — a dead-letter only with its
// copy found in the dead-letter stream (among an earlier copy of another
// entry and one that names this entry in its own fields), whose id the
// outcome records.
func TestFaultEntryAckAndDeadLetterSettled(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kind write.Kind
		lost string // request, reply, cut
		want write.Outcome
		says string
	}{
		{write.KindAck, "request", write.NotApplied, "re-read shows it still pending as read: the write did not happen"},
		{write.KindAck, "reply", write.Applied, "re-read shows it acknowledged: the write was applied"},
		{write.KindDeadLetter, "request", write.NotApplied, "re-read shows it still pending as read: the write did not happen"},
		{write.KindDeadLetter, "reply", write.Applied, "re-read shows it acknowledged and its copy "},
		{write.KindDeadLetter, "cut", write.Applied, "re-read shows it acknowledged and its copy "},
	} {
		f := newFaultRig(t, -1)
		ids := seedPending(t, f.c, testStream, 3, "idemctl.stream", testStream, "idemctl.group", testGroup)
		f.c.XAdd(t.Context(), &redis.XAddArgs{Stream: testDLQ, Values: []any{"n", "0", "idemctl.stream", testStream, "idemctl.group", testGroup,
			"idemctl.id", ids[2], "idemctl.consumer", worker, "idemctl.deliveries", "1", "idemctl.reason", "r", "idemctl.by", "b", "idemctl.at", "1"}})
		req := EntryRequest{Kind: tc.kind, ID: ids[1]}
		if tc.kind == write.KindDeadLetter {
			req.DeadLetter = testDLQ
		}
		p := f.planEntryDirect(req)
		switch tc.lost {
		case "request":
			f.px.DropRequests()
			f.afterDrop(true, 50*time.Millisecond, f.px.Resume)
		case "reply":
			f.px.DropReplies()
			f.afterDrop(false, 50*time.Millisecond, f.px.Resume)
		case "cut":
			f.px.DropReplies()
			f.afterDrop(false, 0, func() { f.px.Resume(); f.px.CutConnections() })
		}
		res := f.ex.Apply(t.Context(), p)
		if res.Outcome != tc.want || !strings.Contains(res.Detail, "uncertain") || !strings.Contains(res.Detail, tc.says) {
			t.Fatalf("%s, %s lost: %+v", tc.kind, tc.lost, res)
		}
		pe, dl := pendingOf(t, f.c, testStream, ids[1]), dlqIDs(t, f.c)
		_, out := f.lastWrite(testStream, tc.want)
		switch {
		case tc.want == write.NotApplied && (pe == nil || pe.Consumer != worker || pe.RetryCount != 1 || len(dl) != 1):
			t.Fatalf("%s, %s lost: written: %+v, dead-letter %v", tc.kind, tc.lost, pe, dl)
		case tc.want == write.Applied && pe != nil:
			t.Fatalf("%s, %s lost: still pending %+v", tc.kind, tc.lost, pe)
		case tc.kind == write.KindDeadLetter && tc.want == write.Applied &&
			(len(dl) != 2 || out.Entry.DeadLetterID != dl[1] || !strings.Contains(res.Detail, "copy "+dl[1]+` in "{orders}:dlq"`)):
			t.Fatalf("%s lost: dead-letter %v, outcome %+v, detail %s", tc.lost, dl, out.Entry, res.Detail)
		case tc.kind == write.KindAck && tc.want == write.Applied && (out.Entry == nil || out.Entry.Left != nil || out.Entry.DeadLetterID != ""):
			t.Fatalf("ack outcome entry %+v", out.Entry)
		}
		if pe := pendingOf(t, f.c, testStream, ids[0]); pe == nil || pe.RetryCount != 1 {
			t.Fatalf("another entry changed: %+v", pe)
		}
	}
}

// A dead-letter whose request is lost while the entry's consumer acks it:
// no longer pending, and no copy since the plan (an entry whose own
// fields name it, not as the origin fields casEntry appends, is none):
// not applied.
func TestFaultEntryDeadLetterAckedMeanwhile(t *testing.T) {
	t.Parallel()
	f := newFaultRig(t, -1)
	ids := seedPending(t, f.c, testStream, 1)
	f.c.XAdd(t.Context(), &redis.XAddArgs{Stream: testDLQ, Values: []any{"idemctl.stream", testStream, "idemctl.group", testGroup,
		"idemctl.id", ids[0], "idemctl.consumer", worker, "idemctl.deliveries", "1", "idemctl.reason", "r", "idemctl.by", "b", "idemctl.at", "1", "x", "y"}})
	p := f.planEntryDirect(EntryRequest{Kind: write.KindDeadLetter, ID: ids[0], DeadLetter: testDLQ})
	f.px.DropRequests()
	f.afterDrop(true, 50*time.Millisecond, func() {
		f.c.XAck(context.Background(), testStream, testGroup, ids[0])
		f.px.Resume()
	})
	res := f.ex.Apply(t.Context(), p)
	if res.Outcome != write.NotApplied || !strings.Contains(res.Detail, `acknowledged but no copy in "{orders}:dlq": acknowledged by someone else; this write did not happen`) {
		t.Fatalf("%+v", res)
	}
	if dl := dlqIDs(t, f.c); len(dl) != 1 {
		t.Fatalf("dead-letter stream: %v", dl)
	}
	f.lastWrite(testStream, write.NotApplied)
}
