package actions

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/internal/testkit/faultproxy"
	"github.com/idemctl/idemctl/internal/testkit/inspecttest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// faultRig is a rig on a private redis-server whose executor talks to it
// through a fault proxy with a short read timeout; the rig's direct client
// sees the truth.
type faultRig struct {
	*rig
	px *faultproxy.Proxy
	pc *redis.Client
}

// newLostReplyRig is a fault rig with a processing record planned for a
// force-fail, whose replies the proxy now drops.
func newLostReplyRig(t *testing.T) (*faultRig, *Plan) {
	f := newFaultRig(t, -1)
	f.reserveAtlas(atlasKey, fp("body-1"))
	p := f.planDirect(Request{Kind: write.KindFail, Keyspace: inspecttest.Keyspace(t, "atlasmart"), Key: atlasKey})
	f.px.DropReplies()
	return f, p
}

func newFaultRig(t *testing.T, retries int) *faultRig {
	t.Helper()
	srv := redistest.Own(t)
	r := newRig(t, srv)
	px, err := faultproxy.Start(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { px.Close() })
	pc := testClient(px.Addr(), "", "", 300*time.Millisecond, retries)
	t.Cleanup(func() { pc.Close() })
	r.ex.Client = pc
	// The scripts are in the server's cache, as after any earlier write: an
	// EVALSHA that reaches the server runs.
	ctx := t.Context()
	for _, s := range []*casScript{casHash, casJSON, casRaw} {
		if err := s.Load(ctx, r.c).Err(); err != nil {
			t.Fatal(err)
		}
	}
	return &faultRig{rig: r, px: px, pc: pc}
}

// planDirect plans over the direct connection (planning is not under test)
// and leaves one warm pooled connection through the proxy for the write.
func (f *faultRig) planDirect(req Request) *Plan {
	f.t.Helper()
	if req.Reason == "" {
		req.Reason = "fault test"
	}
	req.By = testUser
	p, err := BuildPlan(context.Background(), f.c, req)
	if err != nil || p.Refused != "" {
		f.t.Fatalf("plan: %v %v", err, p)
	}
	var err2 error
	for range 5 { // a loaded machine may miss the short timeout once
		if err2 = f.pc.Ping(context.Background()).Err(); err2 == nil {
			return p
		}
	}
	f.t.Fatal(err2)
	return nil
}

// afterDrop runs fn once the proxy has dropped the first bytes of the
// write (in the given direction), after a short pause.
func (f *faultRig) afterDrop(toServer bool, pause time.Duration, fn func()) {
	req, rep := f.px.Dropped()
	base := rep
	if toServer {
		base = req
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if f.px.WaitDropped(ctx, toServer, base+1) == nil {
			time.Sleep(pause)
		}
		fn()
	}()
}

// The script reaches Redis and runs, the reply is lost, the client times
// out: the re-read finds the planned record, the outcome is applied.
func TestFaultReplyLostWriteApplied(t *testing.T) {
	t.Parallel()
	f, p := newLostReplyRig(t)
	f.afterDrop(false, 50*time.Millisecond, f.px.Resume)
	res := f.ex.Apply(t.Context(), p)
	if res.Outcome != write.Applied || !strings.Contains(res.Detail, "uncertain") || !strings.Contains(res.Detail, "re-read shows the write was applied") {
		t.Fatalf("reply lost: %+v", res)
	}
	if got := f.raw(atlasKey)["state"]; got != "FAILED" {
		t.Fatalf("state %q", got)
	}
	_, out := f.lastWrite(atlasKey, write.Applied)
	if out.Detail != res.Detail {
		t.Fatalf("audited detail %q", out.Detail)
	}
	if _, rep := f.px.Dropped(); rep == 0 {
		t.Fatal("the proxy dropped no reply: the fault never happened")
	}
}

// The request never reaches Redis: the re-read finds the record unchanged.
func TestFaultRequestLostNotApplied(t *testing.T) {
	t.Parallel()
	f := newFaultRig(t, -1)
	f.reserveAtlas(atlasKey, fp("body-1"))
	before := f.raw(atlasKey)
	p := f.planDirect(Request{Kind: write.KindFail, Keyspace: inspecttest.Keyspace(t, "atlasmart"), Key: atlasKey})
	f.px.DropRequests()
	f.afterDrop(true, 50*time.Millisecond, f.px.Resume)
	res := f.ex.Apply(t.Context(), p)
	if res.Outcome != write.NotApplied || !strings.Contains(res.Detail, "re-read shows the record unchanged") {
		t.Fatalf("request lost: %+v", res)
	}
	f.unchangedAfter(before, atlasKey, write.NotApplied)
}

// The connection is cut right after the script ran: the client sees the
// connection drop at once (no timeout), and the re-read settles it.
func TestFaultConnectionCutAfterWrite(t *testing.T) {
	t.Parallel()
	// Also with the CLI's client setting (one retry): a resent compare-and-set
	// meets its own first write and must not be reported as a conflict.
	for _, retries := range []int{-1, 1} {
		f := newFaultRig(t, retries)
		f.reserveAtlas(atlasKey, fp("body-1"))
		p := f.planDirect(Request{Kind: write.KindFail, Keyspace: inspecttest.Keyspace(t, "atlasmart"), Key: atlasKey})
		f.px.DropReplies()
		f.afterDrop(false, 0, func() { f.px.Resume(); f.px.CutConnections() })
		res := f.ex.Apply(t.Context(), p)
		if res.Outcome != write.Applied || !strings.Contains(res.Detail, "re-read") {
			t.Fatalf("retries=%d: connection cut after the write: %+v", retries, res)
		}
		if got := f.raw(atlasKey); got["state"] != "FAILED" || got["failed_by"] != testUser {
			t.Fatalf("record %q", got)
		}
		f.lastWrite(atlasKey, write.Applied)
	}
}

// With the CLI's one retry, a timed-out write is not resent either.
func TestFaultTimeoutIsNotRetried(t *testing.T) {
	t.Parallel()
	f := newFaultRig(t, 1)
	f.reserveAtlas(atlasKey, fp("body-1"))
	p := f.planDirect(Request{Kind: write.KindFail, Keyspace: inspecttest.Keyspace(t, "atlasmart"), Key: atlasKey})
	f.px.DropReplies()
	f.afterDrop(false, 0, f.px.Resume)
	res := f.ex.Apply(t.Context(), p)
	if res.Outcome != write.Applied || !strings.Contains(res.Detail, "re-read shows the write was applied") {
		t.Fatalf("timed-out write with retries on: %+v", res)
	}
	f.lastWrite(atlasKey, write.Applied)
}

// The write happened but nothing can be read back: unknown, never assumed.
func TestFaultNoReRead(t *testing.T) {
	t.Parallel()
	f, p := newLostReplyRig(t)
	f.afterDrop(false, 0, func() { f.px.Close() })
	res := f.ex.Apply(t.Context(), p)
	if res.Outcome != write.Unknown || !strings.Contains(res.Detail, "could not be re-read") {
		t.Fatalf("no re-read: %+v", res)
	}
	if got := f.raw(atlasKey)["state"]; got != "FAILED" {
		t.Fatalf("the write should have reached Redis: state %q", got)
	}
	f.lastWrite(atlasKey, write.Unknown)
}

// An expire changes only the TTL; when the record had a TTL already the
// re-read must compare TTLs, not just "has one", to tell what happened.
func TestFaultExpireSettledByTTL(t *testing.T) {
	t.Parallel()
	for _, lost := range []string{"request", "reply"} {
		f := newFaultRig(t, -1)
		f.reserveAtlas(atlasKey, fp("body-1")) // TTL 60s
		p := f.planDirect(Request{Kind: write.KindExpire, Keyspace: inspecttest.Keyspace(t, "atlasmart"), Key: atlasKey, TTL: TTL{Mode: TTLSet, D: 10 * time.Minute}})
		want := write.NotApplied
		if lost == "request" {
			f.px.DropRequests()
		} else {
			f.px.DropReplies()
			want = write.Applied
		}
		f.afterDrop(lost == "request", 50*time.Millisecond, f.px.Resume)
		res := f.ex.Apply(t.Context(), p)
		if res.Outcome != want {
			t.Fatalf("expire, %s lost: %+v (TTL now %v)", lost, res, f.pttl(atlasKey))
		}
		f.lastWrite(atlasKey, want)
	}
}

// The JSON format's write is settled by its decoded fields too.
func TestFaultJSONReplyLost(t *testing.T) {
	t.Parallel()
	f := newFaultRig(t, -1)
	ks := inspecttest.Schema(t, "jsonidem", jsonSchemaYAML)
	for _, req := range []Request{{Kind: write.KindFail}, {Kind: write.KindReconcile, Ref: "ord-1"}} {
		f.setMarker(jsonKey, jsonProcessing, 120*time.Second)
		req.Keyspace, req.Key = ks, jsonKey
		p := f.planDirect(req)
		f.px.DropReplies()
		f.afterDrop(false, 50*time.Millisecond, f.px.Resume)
		res := f.ex.Apply(t.Context(), p)
		if res.Outcome != write.Applied || !strings.Contains(res.Detail, "re-read shows the write was applied") {
			t.Fatalf("json %s, reply lost: %+v\nnow %s", req.Kind, res, f.raw(jsonKey)[""])
		}
		f.lastWrite(jsonKey, write.Applied)
	}
}
