package acceptance

import (
	"context"
	"encoding/json"
	"fmt"
	"os/user"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/cli"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/detect"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/interop"
	"github.com/idemctl/idemctl/internal/testkit/recordtest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// The interop suite: records written by the real libraries (pinned in
// testdata/interop), read by idemctl as each library means them, repaired
// through idemctl, and read back through the library itself. Hand-made
// fixtures prove the presets' mechanics (presets_test.go); this proves them
// right.

// interopLib is what one library promises; see testdata/interop/README.md
// for what each writes.
type interopLib struct {
	lib, preset, match string
	// scan flags: a processing timeout short enough to see records go
	// stale in the test (the libraries' own timeouts are hours, or none).
	timeout      string
	status       bool // the preset reads the replay status
	fingerprint  bool // records carry the library's fingerprint
	errorRecord  bool // a failing handler leaves a record that replays the failure
	reconcilable bool
}

var interopLibs = []interopLib{
	{lib: interop.Powertools, preset: "powertools", match: "*#*", timeout: "15m", reconcilable: false},
	{lib: interop.NodeIdempotency, preset: "node-idempotency", match: "node-idempotency:*", timeout: "2s",
		status: true, fingerprint: true, errorRecord: true, reconcilable: true},
	{lib: interop.ExpressIdempotency, preset: "express-idempotency", match: "*", timeout: "2s", status: true, reconcilable: true},
}

// interopRig is one library on its own real server, with idemctl pointed
// at it.
type interopRig struct {
	t     *testing.T
	il    interopLib
	srv   *redistest.Server
	rdb   *redis.Client
	d     *interop.Driver
	audit string
	body  map[string]any
}

func newInteropRig(t *testing.T, il interopLib) *interopRig {
	srv, rdb := redistest.OwnClient(t)
	return &interopRig{t: t, il: il, srv: srv, rdb: rdb, d: interop.Start(t, srv.Addr),
		audit: recordtest.AuditPath(t), body: map[string]any{"sku": "book-1", "qty": 2}}
}

func (r *interopRig) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	r.t.Cleanup(cancel)
	return ctx
}

// call runs one request through the library.
func (r *interopRig) call(c interop.Cmd) interop.Reply {
	r.t.Helper()
	c.Lib = r.il.lib
	if c.Body == nil {
		c.Body = r.body
	}
	rep, err := r.d.Call(r.ctx(), c)
	if err != nil {
		r.t.Fatalf("%s %s: %v", r.il.lib, c.Key, err)
	}
	return rep
}

// complete answers 201 with a body naming the key.
func (r *interopRig) complete(key string, ttl int) interop.Reply {
	r.t.Helper()
	rep := r.call(interop.Cmd{Key: key, Status: 201, Response: map[string]any{"id": key}, TTLSeconds: ttl})
	if !rep.Ran || rep.Status != 201 {
		r.t.Fatalf("%s: first call: %+v", key, rep)
	}
	return rep
}

// crash leaves the record of a worker killed inside the handler.
func (r *interopRig) crash(key string, remainingMs int) string {
	r.t.Helper()
	rep := r.call(interop.Cmd{Key: key, Outcome: interop.Crash, RemainingMs: remainingMs})
	if !rep.Crashed || rep.RedisKey == "" {
		r.t.Fatalf("%s: crash: %+v", key, rep)
	}
	return rep.RedisKey
}

// retry is a client retrying with the same body: the handler answers 200
// {"id":"afresh"} if the library lets it run.
func (r *interopRig) retry(key string) interop.Reply {
	r.t.Helper()
	return r.call(interop.Cmd{Key: key, Status: 200, Response: map[string]any{"id": "afresh"}})
}

func (r *interopRig) cli(args ...string) clitest.Result {
	r.t.Helper()
	return clitest.Run(r.t, nil, append(args, "--url", r.srv.URL(0), "--preset", r.il.preset, "--match", r.il.match)...)
}

func (r *interopRig) write(args ...string) clitest.Result {
	r.t.Helper()
	return r.cli(append(args, "--write", "--yes", "--audit-log", r.audit)...)
}

// scan lists every record by key.
func (r *interopRig) scan() map[string]map[string]any {
	r.t.Helper()
	res := r.cli("scan", "-o", "ndjson", "--processing-timeout", r.il.timeout)
	res.MustCode(r.t, cli.ExitOK)
	return recordtest.NDJSONByKey(r.t, res.Stdout)
}

// stored decodes the library's own record.
func (r *interopRig) stored(key string) map[string]any {
	r.t.Helper()
	v, err := r.rdb.Get(context.Background(), key).Result()
	if err != nil {
		r.t.Fatalf("GET %s: %v", key, err)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(v), &doc); err != nil {
		r.t.Fatalf("%s: %v: %s", key, err, v)
	}
	return doc
}

// executor is idemctl's write path, for races timed between its plan and
// its write.
func (r *interopRig) executor() (*actions.Executor, *inspect.Keyspace) {
	r.t.Helper()
	s, err := inspect.Preset(r.il.preset)
	if err != nil {
		r.t.Fatal(err)
	}
	ks, err := inspect.NewKeyspace(inspect.KeyspaceSpec{Schema: s, Match: r.il.match})
	if err != nil {
		r.t.Fatal(err)
	}
	aud, err := audit.Open(r.audit)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { aud.Close() })
	me := "interop"
	if u, err := user.Current(); err == nil {
		me = u.Username
	}
	return &actions.Executor{Client: r.rdb, Policy: &actions.Policy{Writes: true}, Audit: aud,
		Identity: audit.Identity{OSUser: me, RedisUser: "default", Address: r.srv.URL(0)}}, ks
}

func TestInteropRealLibraries(t *testing.T) {
	for _, il := range interopLibs {
		t.Run(il.lib, func(t *testing.T) {
			r := newInteropRig(t, il)
			t.Logf("%s: %v", il.lib, r.d.Versions)
			r.readsAsTheLibraryMeansIt()
			r.repairsReadBackThroughTheLibrary()
			r.racesEndInConflict()
		})
	}
}

// Records of every kind, written by the library; detect, scan and stats
// read them as the library means them.
func (r *interopRig) readsAsTheLibraryMeansIt() {
	t := r.t
	want := map[string]string{} // redis key -> state
	stale := map[string]bool{}
	for i := range 3 {
		rep := r.complete(fmt.Sprintf("done-%d", i), 0)
		want[rep.RedisKey] = "succeeded"
	}
	for i := range 2 {
		want[r.crash(fmt.Sprintf("stuck-%d", i), 0)] = "processing"
	}
	if r.il.lib == interop.Powertools {
		// Past the library's in-progress timeout (the Lambda's remaining
		// time): an orphan Powertools takes over on the next call.
		k := r.crash("orphan", 300)
		want[k], stale[k] = "processing", true
		time.Sleep(400 * time.Millisecond)
	} else {
		// Neither express library has an in-progress timeout: a crashed
		// request answers 409 for the whole TTL. Past idemctl's: stale.
		time.Sleep(2100 * time.Millisecond)
		for k, st := range want {
			stale[k] = st == "processing"
		}
		want[r.crash("fresh", 0)] = "processing"
	}
	errKey := ""
	rep := r.call(interop.Cmd{Key: "declined", Outcome: interop.Error, Status: 402, Response: map[string]any{"error": "card declined"}})
	if rep.Status != 402 {
		t.Fatalf("error call: %+v", rep)
	}
	if r.il.errorRecord {
		errKey = rep.RedisKey
		want[errKey] = "failed"
		again := r.call(interop.Cmd{Key: "declined"})
		if again.Ran || again.Status != 402 {
			t.Fatalf("%s replays a stored error: %+v", r.il.lib, again)
		}
	} else if n, _ := r.rdb.Exists(t.Context(), rep.RedisKey).Result(); n != 0 {
		t.Fatalf("%s left a record for a failed handler", r.il.lib)
	}

	det := clitest.Run(t, nil, "detect", "-o", "json", "--url", r.srv.URL(0), "--match", r.il.match)
	det.MustCode(t, cli.ExitOK)
	var d detect.DetectResult
	if err := json.Unmarshal([]byte(det.Stdout), &d); err != nil || d.Best == nil || d.Best.Preset != r.il.preset {
		t.Fatalf("detect: %v\n%s", err, det.Stdout)
	}

	recs := r.scan()
	companions := 0
	for k := range recs {
		if strings.HasSuffix(k, ":lock") {
			companions++
		}
	}
	if len(recs) != len(want) || companions != 0 {
		t.Fatalf("scan listed %d records, want %d:\n%v", len(recs), len(want), recs)
	}
	counts := map[string]int64{}
	for key, st := range want {
		rec := recs[key]
		counts[st]++
		doc := r.stored(key)
		if rec == nil || rec["state"] != st || rec["stale"] != stale[key] {
			t.Errorf("%s: scan %v, want state %s stale %v; stored %v", key, rec, st, stale[key], doc)
			continue
		}
		if flags := fmt.Sprint(rec["flags"]); strings.Contains(flags, "unknown_state") || strings.Contains(flags, "undecoded") ||
			strings.Contains(flags, "decode_error") || strings.Contains(flags, "missing_fingerprint") || strings.Contains(flags, "template_mismatch") {
			t.Errorf("%s: flags %s", key, flags)
		}
		if ttl, _ := rec["ttl_ms"].(float64); ttl <= 0 {
			t.Errorf("%s: ttl_ms %v", key, rec["ttl_ms"])
		}
		if st == "processing" && (rec["age_source"] == "unknown" || rec["age_ms"].(float64) < 0 || rec["age_ms"].(float64) > 60_000) {
			t.Errorf("%s: age %v from %v", key, rec["age_ms"], rec["age_source"])
		}
		if r.il.fingerprint && rec["fingerprint"] != doc["fingerPrint"] {
			t.Errorf("%s: fingerprint %v, the library stored %v", key, rec["fingerprint"], doc["fingerPrint"])
		}
		switch {
		case !r.il.status:
		case st == "succeeded" && rec["status"] != float64(201), st == "failed" && rec["status"] != float64(402):
			t.Errorf("%s: status %v, the library replays %v", key, rec["status"], doc["response"])
		}
	}
	var s clitest.StatsOut
	st := r.cli("stats", "-o", "json", "--processing-timeout", r.il.timeout)
	st.MustCode(t, cli.ExitOK)
	if err := json.Unmarshal([]byte(st.Stdout), &s); err != nil {
		t.Fatal(err)
	}
	nStale := int64(0)
	for _, v := range stale {
		if v {
			nStale++
		}
	}
	for state, n := range counts {
		if s.ByState[state] != n {
			t.Errorf("stats: %s %d, want %d (%v)", state, s.ByState[state], n, s.ByState)
		}
	}
	if s.Total != int64(len(want)) || s.Stale != nStale {
		t.Errorf("stats: total %d stale %d, want %d and %d", s.Total, s.Stale, len(want), nStale)
	}
	// The library's own records read the same by both read paths.
	readPathsAgree(t, "--url", r.srv.URL(0), "--preset", r.il.preset, "--match", r.il.match, "--processing-timeout", r.il.timeout)
	// Let the retries below run without the orphan's leftovers.
	for k := range want {
		r.rdb.Del(t.Context(), k, k+":lock")
	}
}

// Each repair, then the library itself: does a retry run afresh, replay,
// honour the new lifetime?
func (r *interopRig) repairsReadBackThroughTheLibrary() {
	t := r.t
	ctx := t.Context()

	// fail: the next retry runs the handler afresh.
	k := r.crash("fail-me", 0)
	if rep := r.retry("fail-me"); rep.Ran {
		t.Fatalf("a retry ran while the crashed record was there: %+v", rep)
	}
	r.write("fail", k, "--reason", "worker died; nothing in the orders DB").MustCode(t, cli.ExitOK)
	if rep := r.retry("fail-me"); !rep.Ran || rep.Status != 200 {
		t.Fatalf("after fail, a retry: %+v", rep)
	}

	// expire --ttl 0: the same.
	k = r.crash("drop-me", 0)
	r.write("expire", k, "--ttl", "0", "--reason", "let the client retry").MustCode(t, cli.ExitOK)
	if rep := r.retry("drop-me"); !rep.Ran {
		t.Fatalf("after expire --ttl 0, a retry: %+v", rep)
	}

	// expire --ttl 1h on a record about to end: the library replays it
	// after its old end (Powertools reads its own expiration field).
	k = r.complete("extend-me", 2).RedisKey
	res := r.write("expire", k, "--ttl", "1h", "--reason", "keep the replay for the incident")
	res.MustCode(t, cli.ExitOK)
	if r.il.lib == interop.Powertools && !strings.Contains(res.Stderr, "expiration") {
		t.Errorf("the diff does not show the stored expiration: %s", res.Stderr)
	}
	time.Sleep(2500 * time.Millisecond)
	if rep := r.retry("extend-me"); rep.Ran || rep.Status != 201 {
		t.Fatalf("after expire --ttl 1h and the old end, a retry: %+v (record %v)", rep, r.stored(k))
	}
	// …and a shorter life ends it for the library too.
	k = r.complete("shorten-me", 0).RedisKey
	r.write("expire", k, "--ttl", "1s", "--reason", "replay no longer wanted").MustCode(t, cli.ExitOK)
	time.Sleep(1200 * time.Millisecond)
	if rep := r.retry("shorten-me"); !rep.Ran {
		t.Fatalf("after expire --ttl 1s, a retry: %+v", rep)
	}

	// reconcile: the library replays the reconciled response and status.
	k = r.crash("reconcile-me", 0)
	res = r.write("reconcile", k, "--ref", "ord-77", "--status", "201", "--response", `{"id":"ord-77"}`,
		"--reason", "charged per the PSP; the order exists")
	if !r.il.reconcilable {
		res.MustCode(t, cli.ExitRefused)
		if !strings.Contains(res.Stdout+res.Stderr, "cannot express reconcile") {
			t.Fatalf("the refusal does not say why: %s %s", res.Stdout, res.Stderr)
		}
		return
	}
	res.MustCode(t, cli.ExitOK)
	if !strings.Contains(res.Stderr, "201") {
		t.Errorf("the diff does not show the status: %s", res.Stderr)
	}
	rep := r.retry("reconcile-me")
	if rep.Ran || rep.Status != 201 || rep.Error != "" || rep.BodyString() != `{"id":"ord-77"}` {
		t.Fatalf("after reconcile, a retry: %+v (record %v)", rep, r.stored(k))
	}
	if r.il.errorRecord {
		// A stored failure reconciled: the library replays the body.
		rep := r.call(interop.Cmd{Key: "declined-2", Outcome: interop.Error, Status: 402})
		r.write("reconcile", rep.RedisKey, "--ref", "ord-78", "--reason", "charged after all").MustCode(t, cli.ExitOK)
		again := r.retry("declined-2")
		if again.Ran || again.Status != 200 || again.Error != "" || !strings.Contains(again.BodyString(), `"ord-78"`) {
			t.Fatalf("after reconciling a stored error, a retry: %+v", again)
		}
	}
	_ = ctx
}

// The library completes or re-reserves the record between idemctl's read
// and its write: a conflict, and the library's record intact.
func (r *interopRig) racesEndInConflict() {
	t := r.t
	ctx := t.Context()
	ex, ks := r.executor()
	plan := func(key string) *actions.Plan {
		t.Helper()
		p, err := ex.Plan(ctx, actions.Request{Kind: write.KindFail, Keyspace: ks, Key: key, Reason: "looks stuck"})
		if err != nil || p.Refused != "" {
			t.Fatalf("plan %s: %v %q", key, err, p.Refused)
		}
		return p
	}
	mustConflict := func(p *actions.Plan, key string) {
		t.Helper()
		before, _ := r.rdb.Get(ctx, key).Result()
		if res := ex.Apply(ctx, p); res.Outcome != write.Conflict {
			t.Fatalf("%s: %+v", key, res)
		}
		if after, _ := r.rdb.Get(ctx, key).Result(); after != before {
			t.Fatalf("%s: the conflicting write changed the library's record", key)
		}
	}

	// Completes meanwhile.
	held, err := r.d.Start(r.ctx(), "complete-race", interop.Cmd{Lib: r.il.lib, Key: "complete-race", Body: r.body,
		Status: 201, Response: map[string]any{"id": "late"}})
	if err != nil || !held.Started {
		t.Fatalf("start: %+v %v", held, err)
	}
	p := plan(held.RedisKey)
	if done, err := r.d.Finish(r.ctx(), "complete-race"); err != nil || !done.Ran || done.Status != 201 {
		t.Fatalf("finish: %+v %v", done, err)
	}
	mustConflict(p, held.RedisKey)
	if rep := r.retry("complete-race"); rep.Ran || rep.Status != 201 || rep.BodyString() != `{"id":"late"}` {
		t.Fatalf("the library's completion was not kept: %+v", rep)
	}

	// Re-reserved meanwhile: Powertools takes an orphan over under its
	// lock; the express libraries reserve again once the record is gone.
	key := ""
	if r.il.lib == interop.Powertools {
		key = r.crash("rereserve-race", 200)
		time.Sleep(300 * time.Millisecond)
	} else {
		key = r.crash("rereserve-race", 0)
	}
	p = plan(key)
	if r.il.lib != interop.Powertools {
		r.rdb.Del(ctx, key) // its TTL ran out
	}
	held, err = r.d.Start(r.ctx(), "rereserve-race", interop.Cmd{Lib: r.il.lib, Key: "rereserve-race", Body: r.body,
		Status: 201, Response: map[string]any{"id": "second"}})
	if err != nil || !held.Started || held.RedisKey != key {
		t.Fatalf("start: %+v %v", held, err)
	}
	mustConflict(p, key)
	if done, err := r.d.Finish(r.ctx(), "rereserve-race"); err != nil || !done.Ran || done.Status != 201 {
		t.Fatalf("the re-reserved request could not complete: %+v %v", done, err)
	}

	// The printed, pinned command applies to nothing that changed after it
	// was printed, even when state and fingerprint are the same.
	key = r.crash("pinned", 0)
	res := r.cli("fail", key, "--reason", "stuck", "--write", "--audit-log", r.audit)
	res.MustCode(t, cli.ExitRefused)
	args, stdin := clitest.PrintedCommand(t, res.Stderr)
	r.rdb.Del(ctx, key)
	r.crash("pinned", 0) // the same request again: identical bytes, a new reservation
	before, _ := r.rdb.Get(ctx, key).Result()
	again := clitest.RunStdin(t, stdin, nil, args...)
	again.MustCode(t, cli.ExitConflict)
	if after, _ := r.rdb.Get(ctx, key).Result(); after != before || !strings.Contains(again.Stdout+again.Stderr, "TTL was re-set") {
		t.Fatalf("pinned command on a re-reserved record: %s %s", again.Stdout, again.Stderr)
	}
}
