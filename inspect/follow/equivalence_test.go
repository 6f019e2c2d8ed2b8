package follow_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/follow"
	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/faultproxy"
	"github.com/idemctl/idemctl/internal/testkit/inspecttest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// Stale timing: processing records turn stale 1s after RESERVE, and the
// simulator's reserve TTL (3s) expires the crashed ones soon after.
const (
	equivTimeout = time.Second
	equivReserve = 3 * time.Second
	staleLimit   = 2 * time.Second
)

func equivKeyspace(t *testing.T) *inspect.Keyspace {
	return inspecttest.Spec(t, inspect.KeyspaceSpec{Schema: inspecttest.Preset(t, "atlasmart"),
		ProcessingTimeout: equivTimeout, ReserveTTL: equivReserve})
}

// workload is the application: the simulator reserving, completing and
// crashing (its records expiring on short TTLs), and a client deleting
// records now and then.
type workload struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	sim    *appsim.Simulator
}

func startWorkload(c redis.UniversalClient, retention time.Duration, seed uint64) *workload {
	ctx, cancel := context.WithCancel(context.Background())
	w := &workload{cancel: cancel, sim: appsim.NewSimulator(c, appsim.SimConfig{Rate: 80, CrashRate: 0.2,
		WorkTime: 200 * time.Millisecond, ReserveTTL: equivReserve, Retention: retention, RandSeed: seed})}
	w.wg.Add(2)
	go func() { defer w.wg.Done(); _ = w.sim.Run(ctx) }()
	go func() { defer w.wg.Done(); deleteSome(ctx, c, seed) }()
	return w
}

// deleteSome deletes a random record every 100ms (an operator, a reaper).
func deleteSome(ctx context.Context, c redis.UniversalClient, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	for ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
		keys, _, err := c.Scan(ctx, rng.Uint64N(1<<10), "atlasmart:ch23:idem:*", 20).Result()
		if err == nil && len(keys) > 0 {
			c.Del(ctx, keys[rng.IntN(len(keys))])
		}
	}
}

func (w *workload) stop() { w.cancel(); w.wg.Wait() }

// startFollowing runs a follower over c into a followed view.
func startFollowing(t *testing.T, c redis.UniversalClient, ks *inspect.Keyspace, opt follow.Options) (*followed, *follow.Follower) {
	opt.KeepKeys = true
	f := follow.New(c, []*inspect.Keyspace{ks}, opt)
	v := newFollowed(ks.ProcessingTimeout)
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan follow.Update, 256)
	done := make(chan struct{})
	go func() { defer close(done); v.consume(out) }()
	go func() {
		if err := f.Run(ctx, out); err != nil {
			t.Errorf("follow: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return v, f
}

// freshPass is a full scan's records by key.
func freshPass(t *testing.T, c redis.UniversalClient, ks *inspect.Keyspace) map[string]inspect.Record {
	t.Helper()
	out := map[string]inspect.Record{}
	_, err := inspect.Scan(context.Background(), c, []*inspect.Keyspace{ks}, inspect.Options{}, func(b inspect.Batch) error {
		for _, r := range b.Records {
			out[r.Key] = r
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFollowEquivalence: with the application writing, completing,
// crashing, expiring and deleting records, the watch connection cut and
// the database flushed in the middle, the followed view ends equal to a
// fresh pass record for record, and every record that went stale was
// reported stale within 2s of its deadline.
func TestFollowEquivalence(t *testing.T) {
	srv, direct := redistest.OwnClient(t)
	proxy, err := faultproxy.Start(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	viaProxy := redis.NewClient(&redis.Options{Addr: proxy.Addr(), MaxRetries: 3})
	t.Cleanup(func() { viaProxy.Close() })
	ks := equivKeyspace(t)

	w := startWorkload(direct, 4*time.Second, 1)
	time.Sleep(2 * time.Second) // records exist before the first pass
	v, f := startFollowing(t, viaProxy, ks, follow.Options{})
	v.waitDone(t, 1, 20*time.Second)
	time.Sleep(5 * time.Second)

	proxy.CutConnections()
	v.waitDone(t, 2, 20*time.Second)
	time.Sleep(4 * time.Second)

	if err := direct.FlushDB(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	v.waitDone(t, 3, 20*time.Second)
	time.Sleep(4 * time.Second)
	w.stop()

	// The last records are kept (a long retention), so the comparison is
	// of a keyspace that holds records; the short-lived ones expire.
	w = startWorkload(direct, 300*time.Second, 2)
	time.Sleep(3 * time.Second)
	w.stop()
	checkQuiescent(t, v, f, direct, ks, 3)
}

// checkQuiescent waits for every short TTL to run out, then compares the
// followed view with a fresh pass and checks the stale timing.
func checkQuiescent(t *testing.T, v *followed, f *follow.Follower, direct redis.UniversalClient, ks *inspect.Keyspace, resyncs int) {
	t.Helper()
	time.Sleep(equivReserve + 2*time.Second)
	freshPass(t, direct, ks) // a SCAN reaps what expired unseen: its events come now
	time.Sleep(time.Second)
	fresh := freshPass(t, direct, ks)
	got := v.snapshot()
	d := diff(got, fresh)
	for i, line := range d {
		if i == 20 {
			t.Errorf("... and %d more", len(d)-20)
			break
		}
		t.Error(line)
	}
	st := f.Stats()
	n, p50, p99, worst := v.lateness()
	t.Logf("%d records, %d differences; mode %s; re-syncs %q; events %d, reads %d; stale reports %d: late p50 %s p99 %s worst %s",
		len(fresh), len(d), st.Mode, v.resyncs, st.Events, st.Reads, n, p50, p99, worst)
	if len(fresh) == 0 {
		t.Error("the fresh pass found no records: the comparison proves nothing")
	}
	if n == 0 {
		t.Error("no record was reported stale: the workload crashes requests")
	}
	if worst > staleLimit {
		t.Errorf("a record was reported stale %s after its deadline (limit %s)", worst, staleLimit)
	}
	for _, s := range v.slow {
		t.Log(s)
	}
	for _, o := range v.overdue(staleLimit) {
		t.Error(o)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, e := range v.errs {
		t.Error(e)
	}
	if v.done < resyncs {
		t.Errorf("re-syncs %q: want %d completed", v.resyncs, resyncs)
	}
}
