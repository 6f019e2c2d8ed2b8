package appsim_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/pgtest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
	"github.com/redis/go-redis/v9"
)

// start runs the simulator in the background; stop cancels it and returns
// Run's result, failing the test if Run does not return.
func start(t *testing.T, sim *appsim.Simulator) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- sim.Run(ctx) }()
	t.Cleanup(cancel)
	return func() error {
		t.Helper()
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return within 10s of cancel")
			return nil
		}
	}
}

// waitFor polls cond until it holds or the deadline passes: no tight timing.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// checkKeyspace reads every record back from Redis, checks each is a
// well-formed lesson record, and returns the counts by stored state.
func checkKeyspace(t *testing.T, c *redis.Client) (processing, succeeded int64) {
	t.Helper()
	ctx := t.Context()
	iter := c.Scan(ctx, 0, "*", 1000).Iterator()
	for iter.Next(ctx) {
		key := iter.Val()
		if !strings.HasPrefix(key, "atlasmart:ch23:idem:customer-") || !strings.Contains(key, ":sim-") {
			t.Errorf("unexpected key %q", key)
		}
		if typ := c.Type(ctx, key).Val(); typ != "hash" {
			t.Errorf("%s: type %s, want hash", key, typ)
			continue
		}
		h := c.HGetAll(ctx, key).Val()
		if !hex64.MatchString(h["fingerprint"]) {
			t.Errorf("%s: fingerprint %q is not 64 hex digits", key, h["fingerprint"])
		}
		ttl := c.TTL(ctx, key).Val()
		switch h["state"] {
		case "PROCESSING":
			processing++
			if ttl <= 0 || ttl > 60*time.Second {
				t.Errorf("%s: processing TTL %v, want the reserve TTL (60s)", key, ttl)
			}
		case "SUCCEEDED":
			succeeded++
			if h["status"] != "201" || !json.Valid([]byte(h["response"])) {
				t.Errorf("%s: status %q response %q", key, h["status"], h["response"])
			}
			if ttl <= 60*time.Second {
				t.Errorf("%s: succeeded TTL %v, want the retention (300s)", key, ttl)
			}
		default:
			t.Errorf("%s: state %q", key, h["state"])
		}
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return processing, succeeded
}

func TestSimulatorKeyspaceMatchesStats(t *testing.T) {
	c := redistest.Shared(t).Client(0)
	defer c.Close()
	sim := appsim.NewSimulator(c, appsim.SimConfig{Rate: 400, CrashRate: 0.3, WorkTime: 100 * time.Millisecond, RandSeed: 1})
	stop := start(t, sim)
	time.Sleep(1500 * time.Millisecond)
	if err := stop(); err != nil {
		t.Fatalf("Run returned %v on cancel, want nil", err)
	}
	st := sim.Stats()
	t.Logf("stats %+v", st)
	if st.Started < 20 || st.Completed == 0 || st.Crashed == 0 {
		t.Fatalf("too little traffic to check anything: %+v", st)
	}
	if st.Errors != 0 {
		t.Errorf("Errors = %d against a healthy server", st.Errors)
	}
	if st.Started < st.Completed+st.Crashed {
		t.Errorf("Started %d < Completed %d + Crashed %d", st.Started, st.Completed, st.Crashed)
	}
	processing, succeeded := checkKeyspace(t, c)
	if succeeded != st.Completed {
		t.Errorf("SUCCEEDED records %d, Completed %d", succeeded, st.Completed)
	}
	if processing < st.Crashed {
		t.Errorf("PROCESSING records %d < Crashed %d: a crashed request completed", processing, st.Crashed)
	}
	if processing+succeeded != st.Started {
		t.Errorf("%d records, Started %d: retries must not create records", processing+succeeded, st.Started)
	}
}

func TestSimulatorRetriesGetConflict(t *testing.T) {
	c := redistest.Shared(t).Client(0)
	defer c.Close()
	sim := appsim.NewSimulator(c, appsim.SimConfig{Rate: 300, RetryRate: 0.6, CrashRate: 0.1, WorkTime: 50 * time.Millisecond, RandSeed: 3})
	stop := start(t, sim)
	waitFor(t, 20*time.Second, "a CONFLICT, a duplicate and some completions", func() bool {
		st := sim.Stats()
		return st.Conflicts > 0 && st.Duplicates > 0 && st.Completed >= 20
	})
	if err := stop(); err != nil {
		t.Fatalf("Run returned %v on cancel, want nil", err)
	}
	st := sim.Stats()
	t.Logf("stats %+v", st)
	// A rejected retry changes nothing: the keyspace still holds exactly
	// the started records, each with its own fingerprint.
	processing, succeeded := checkKeyspace(t, c)
	if processing+succeeded != st.Started || succeeded != st.Completed || st.Errors != 0 {
		t.Errorf("records %d (succeeded %d) vs stats %+v", processing+succeeded, succeeded, st)
	}
}

func TestSimulatorSurvivesServerLoss(t *testing.T) {
	srv := redistest.Own(t)
	c := srv.Client(0)
	defer c.Close()
	sim := appsim.NewSimulator(c, appsim.SimConfig{Rate: 200, WorkTime: 50 * time.Millisecond, RandSeed: 2})
	stop := start(t, sim)
	waitFor(t, 10*time.Second, "completions", func() bool { return sim.Stats().Completed > 0 })

	srv.Stop()
	waitFor(t, 15*time.Second, "errors after the server went away", func() bool { return sim.Stats().Errors > 0 })
	before := sim.Stats().Errors
	waitFor(t, 15*time.Second, "the loop to go on after its backoff", func() bool { return sim.Stats().Errors > before })

	if err := stop(); err != nil {
		t.Fatalf("Run returned %v on cancel, want nil", err)
	}
	t.Logf("stats %+v", sim.Stats())
}

// The application's ground truth matches Redis and the database: completed
// requests are SUCCEEDED with their order's response, crashed ones stay
// PROCESSING, with an order exactly when they crashed after the insert.
func TestOrdersAppGroundTruth(t *testing.T) {
	_, rc := redistest.SharedClient(t)
	pg := pgtest.Own(t)
	app := appsim.NewOrdersApp(rc, pg.DB(), appsim.OrdersConfig{CrashBeforeInsert: 0.2, CrashAfterInsert: 0.2, RandSeed: 7})
	app.Serve(60)
	run, stop := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { app.Run(run); close(done) }()
	defer func() { stop(); <-done }()
	for deadline := time.Now().Add(time.Minute); len(app.Truth().Completed) < 60; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the application completed %d requests in a minute: %+v", len(app.Truth().Completed), app.Truth().Errors)
		}
	}
	stop()
	<-done
	ctx := t.Context()
	tr := app.Truth()
	if tr.Errors != 0 || len(tr.Refused) != 0 {
		t.Fatalf("errors %d, refused %d", tr.Errors, len(tr.Refused))
	}
	if len(tr.CrashedBeforeInsert) == 0 || len(tr.CrashedAfterInsert) == 0 {
		t.Fatalf("no crashes of one kind: %d before, %d after", len(tr.CrashedBeforeInsert), len(tr.CrashedAfterInsert))
	}
	orders := func(w appsim.OrderWrite) (id int64, resp string, n int) {
		rows, err := pg.DB().Query(`SELECT id, response FROM orders WHERE principal = $1 AND idem_key = $2`, w.Principal, w.IdemKey)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			n++
			if err := rows.Scan(&id, &resp); err != nil {
				t.Fatal(err)
			}
		}
		return id, resp, n
	}
	for _, w := range tr.Completed {
		h := rc.HGetAll(ctx, w.Key).Val()
		id, resp, n := orders(w)
		if h["state"] != "SUCCEEDED" || h["response"] != w.Response || n != 1 || id != w.OrderID || resp != w.Response || h["fingerprint"] != w.Fingerprint {
			t.Fatalf("completed %s: record %v, order %d %q (%d rows), app %+v", w.Key, h, id, resp, n, w)
		}
	}
	for _, w := range tr.CrashedAfterInsert {
		id, _, n := orders(w)
		if st := rc.HGet(ctx, w.Key, "state").Val(); st != "PROCESSING" || n != 1 || id != w.OrderID {
			t.Fatalf("crashed after insert %s: state %s, %d orders", w.Key, st, n)
		}
	}
	for _, w := range tr.CrashedBeforeInsert {
		if _, _, n := orders(w); n != 0 || rc.HGet(ctx, w.Key, "state").Val() != "PROCESSING" {
			t.Fatalf("crashed before insert %s: %d orders", w.Key, n)
		}
	}
}

// The application tells its database of every order it created: each
// completed request's, and those of the workers that crashed after the
// insert; never one for a worker that crashed before it. A verify hook
// over that database gives real verdicts.
func TestSimulatorEffectsAreTheTruth(t *testing.T) {
	_, c := redistest.SharedClient(t)
	effects := map[string]string{}
	var mu sync.Mutex
	sim := appsim.NewSimulator(c, appsim.SimConfig{Rate: 200, CrashRate: 0.5, RetryRate: -1, WorkTime: 20 * time.Millisecond,
		RandSeed: 7, Effects: func(key, ref string) { mu.Lock(); effects[key] = ref; mu.Unlock() }})
	stop := start(t, sim)
	waitFor(t, 10*time.Second, "crashes and completions", func() bool {
		st := sim.Stats()
		return st.Crashed >= 20 && st.Completed >= 20
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	var crashedWith, crashedWithout int
	iter := c.Scan(ctx, 0, "atlasmart:ch23:idem:*:sim-*", 1000).Iterator()
	for iter.Next(ctx) {
		h := c.HGetAll(ctx, iter.Val()).Val()
		ref, ok := effects[iter.Val()]
		switch {
		case h["state"] == "SUCCEEDED" && (!ok || !strings.Contains(h["response"], `"`+ref+`"`)):
			t.Errorf("%s completed with %s; its order is %q", iter.Val(), h["response"], ref)
		case h["state"] == "PROCESSING" && ok:
			crashedWith++
		case h["state"] == "PROCESSING":
			crashedWithout++
		}
	}
	if crashedWith == 0 || crashedWithout == 0 {
		t.Errorf("crashed after the insert %d, before it %d: want both", crashedWith, crashedWithout)
	}
}

// Crashed names every request whose worker died, with when RESERVE
// answered (its record is still processing); Latency hears every call.
func TestSimulatorTellsCrashesAndLatency(t *testing.T) {
	c := redistest.Shared(t).Client(0)
	defer c.Close()
	var mu sync.Mutex
	crashed := map[string]time.Time{}
	var calls int64
	began := time.Now()
	sim := appsim.NewSimulator(c, appsim.SimConfig{Rate: 300, CrashRate: 0.3, WorkTime: 50 * time.Millisecond, RandSeed: 7,
		Crashed: func(key string, at time.Time) { mu.Lock(); crashed[key] = at; mu.Unlock() },
		Latency: func(d time.Duration) {
			if d <= 0 {
				t.Errorf("latency %v", d)
			}
			atomic.AddInt64(&calls, 1)
		}})
	stop := start(t, sim)
	time.Sleep(time.Second)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	st := sim.Stats()
	mu.Lock()
	defer mu.Unlock()
	if int64(len(crashed)) != st.Crashed || st.Crashed == 0 {
		t.Fatalf("told of %d crashes, Crashed %d", len(crashed), st.Crashed)
	}
	for key, at := range crashed {
		if at.Before(began) || at.After(time.Now()) {
			t.Errorf("%s: reserved at %v, outside the run", key, at)
		}
		if s, err := c.HGet(t.Context(), key, "state").Result(); err != nil || s != "PROCESSING" {
			t.Errorf("%s: state %q (%v), want PROCESSING", key, s, err)
		}
	}
	if n := atomic.LoadInt64(&calls); n < st.Started+st.Completed {
		t.Errorf("Latency heard %d calls, want at least %d", n, st.Started+st.Completed)
	}
}
