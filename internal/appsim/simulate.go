package appsim

import (
	"context"
	cryptorand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// SimConfig tunes the simulated application. Zero values take the defaults;
// a negative CrashRate or RetryRate turns that behaviour off.
type SimConfig struct {
	Rate       int           // requests started per second (default 20)
	CrashRate  float64       // share of requests whose worker "crashes" after RESERVE and never completes (default 0.05)
	WorkTime   time.Duration // how long a request takes between RESERVE and COMPLETE (default 300ms)
	ReserveTTL time.Duration // whole seconds; default 60s
	Retention  time.Duration // default 300s
	RetryRate  float64       // share of requests that are client retries of a recent key with the same body (default 0.1); a retry of a key with a different body gets CONFLICT
	RandSeed   uint64
	// Effects, if set, is told of each request whose side effect happened
	// (its order was created), with the order's reference: before its
	// COMPLETE, and for the share CrashAfterEffect of the crashed ones,
	// whose worker died after the effect and before COMPLETE. It is the
	// application's database, which a verify hook may ask. Called from
	// Run's goroutine.
	Effects          func(key, ref string)
	CrashAfterEffect float64 // default 0.5; only with Effects
	// Crashed, if set, is told of each request whose worker died after
	// RESERVE, with when RESERVE answered: the record's processing
	// deadline is that plus the keyspace's timeout, which is what a
	// benchmark of stale detection measures from. Called from Run's
	// goroutine.
	Crashed func(key string, reservedAt time.Time)
	// Latency, if set, is told how long each of the application's calls
	// (RESERVE, COMPLETE) took, as its clients would wait for it.
	Latency func(d time.Duration)
}

// SimStats counts what the simulator did (read with Stats()).
type SimStats struct {
	Started    int64 // RESERVE created a new PROCESSING record
	Completed  int64 // COMPLETE turned a record SUCCEEDED
	Crashed    int64 // reserved records whose worker died: they stay PROCESSING
	Duplicates int64 // retries answered with the stored state (PROCESSING or SUCCEEDED)
	Conflicts  int64 // retries with another body, rejected with CONFLICT
	Errors     int64 // failed Redis calls, and completions the script refused
}

// Simulator is a live application over the atlasmart keyspace: it reserves
// and completes records with the lesson's scripts so a demo has traffic,
// retries, conflicts and stuck records to look at.
type Simulator struct {
	c       redis.UniversalClient
	cfg     SimConfig
	runID   string
	running atomic.Bool

	started, completed, crashed, duplicates, conflicts, errs atomic.Int64
}

const (
	simPrincipals = 200
	// Of the retries, the share where the client reuses the key for another
	// body (a client bug) and so gets CONFLICT.
	retryConflictShare = 0.25
	recentRequests     = 256 // retries pick among the last this many new requests
	maxRate            = 10_000
	opTimeout          = 2 * time.Second // bounds one Redis call (see opContext)
	minBackoff         = 100 * time.Millisecond
	maxBackoff         = 2 * time.Second
)

// NewSimulator prepares a simulator; it does nothing until Run.
func NewSimulator(c redis.UniversalClient, cfg SimConfig) *Simulator {
	// The run id is random whatever RandSeed is, so a restarted demo never
	// meets its previous records; the "sim-" prefix keeps clear of seeded
	// "req-" keys.
	var b [4]byte
	_, _ = cryptorand.Read(b[:]) // never fails (crypto/rand.Read panics rather than err)
	return &Simulator{c: c, cfg: cfg.withDefaults(), runID: hex.EncodeToString(b[:])}
}

func (c SimConfig) withDefaults() SimConfig {
	if c.Rate <= 0 {
		c.Rate = 20
	}
	c.Rate = min(c.Rate, maxRate)
	c.CrashRate = share(c.CrashRate, 0.05)
	c.RetryRate = share(c.RetryRate, 0.1)
	c.CrashAfterEffect = share(c.CrashAfterEffect, 0.5)
	if c.WorkTime <= 0 {
		c.WorkTime = 300 * time.Millisecond
	}
	c.ReserveTTL = wholeSeconds(c.ReserveTTL, 60*time.Second)
	c.Retention = wholeSeconds(c.Retention, 300*time.Second)
	return c
}

func share(v, def float64) float64 {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return min(v, 1)
}

// wholeSeconds rounds up: the scripts EXPIRE in seconds.
func wholeSeconds(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return (d + time.Second - 1).Truncate(time.Second)
}

// Stats returns the counters so far; safe for concurrent use.
func (s *Simulator) Stats() SimStats {
	// Started is read last so that Started >= Completed + Crashed holds even
	// while Run is counting.
	st := SimStats{
		Completed:  s.completed.Load(),
		Crashed:    s.crashed.Load(),
		Duplicates: s.duplicates.Load(),
		Conflicts:  s.conflicts.Load(),
		Errors:     s.errs.Load(),
	}
	st.Started = s.started.Load()
	return st
}

// simReq is one request the application is working on.
type simReq struct {
	id, key, fp string
	due         time.Time // when its worker calls COMPLETE
}

// loop is Run's state, owned by Run's goroutine alone.
type loop struct {
	*Simulator
	rng     *rand.Rand
	zipf    *rand.Zipf
	seq     int
	pending []simReq // FIFO: every request takes WorkTime, so due times follow start order
	recent  []simReq // ring of recent new requests, for retries
	next    int      // ring position to overwrite
}

// opContext detaches a Redis call from Run's context, bounded by opTimeout
// instead: a cancel must never leave a call that Redis executed uncounted
// here, or Stats would disagree with the keyspace.
func opContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), opTimeout)
}

// Run drives traffic until ctx is cancelled; it returns nil on cancellation,
// and never panics. Redis errors are counted (Errors) and the loop goes on
// after a short backoff, so a connection loss does not kill it. Requests
// still at work when ctx is cancelled die with the application: their
// records stay PROCESSING. One goroutine does everything: a ticker starts
// requests and a timer fires completions, so nothing grows without bound.
func (s *Simulator) Run(ctx context.Context) (err error) {
	if !s.running.CompareAndSwap(false, true) {
		return errors.New("appsim: Simulator.Run is already running")
	}
	defer s.running.Store(false)
	// Run lives in a background goroutine, where a panic would take the
	// whole process (and a TUI's terminal state) down with it.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("appsim: simulator stopped: %v", r)
		}
	}()
	rng := rand.New(rand.NewPCG(s.cfg.RandSeed, 0x51a7))
	l := &loop{Simulator: s, rng: rng, zipf: rand.NewZipf(rng, 1.2, 4, simPrincipals-1)}

	tick := time.NewTicker(time.Second / time.Duration(s.cfg.Rate))
	defer tick.Stop()
	due := time.NewTimer(time.Hour)
	due.Stop()
	defer due.Stop()
	var backoff time.Duration
	for ctx.Err() == nil {
		var stepErr error
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			stepErr = l.request(ctx)
		case now := <-due.C:
			stepErr = l.completeDue(ctx, now)
		}
		if len(l.pending) > 0 {
			due.Reset(time.Until(l.pending[0].due))
		}
		if stepErr == nil {
			backoff = 0
			continue
		}
		s.errs.Add(1)
		backoff = min(max(2*backoff, minBackoff), maxBackoff)
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
	}
	return nil
}

// request starts a new request, or retries a recent one.
func (l *loop) request(ctx context.Context) error {
	if len(l.recent) > 0 && l.rng.Float64() < l.cfg.RetryRate {
		r := l.recent[l.rng.IntN(len(l.recent))]
		if l.rng.Float64() < retryConflictShare {
			r.fp = Fingerprint(fmt.Sprintf(`{"qty":%d,"sku":"sku-retry-%d"}`, 1+l.rng.IntN(5), l.rng.IntN(5000)))
		}
		return l.reserve(ctx, r)
	}
	l.seq++
	r := simReq{id: fmt.Sprintf("sim-%s-%d", l.runID, l.seq)}
	principal := fmt.Sprintf("customer-%d", l.zipf.Uint64()+1)
	ep := atlasEndpoints[l.rng.IntN(len(atlasEndpoints))]
	r.key = fmt.Sprintf("atlasmart:ch23:idem:%s:%s:%s", principal, ep, r.id)
	r.fp = Fingerprint(fmt.Sprintf(`{"qty":%d,"sku":"sku-%d"}`, 1+l.rng.IntN(5), l.rng.IntN(5000)))
	return l.reserve(ctx, r)
}

// reserve runs RESERVE and acts on its answer as the application would.
func (l *loop) reserve(ctx context.Context, r simReq) error {
	opCtx, cancel := opContext(ctx)
	defer cancel()
	ttl := int64(l.cfg.ReserveTTL / time.Second)
	began := time.Now()
	v, err := Reserve.Run(opCtx, l.c, []string{r.key}, r.fp, ttl).Slice()
	if err != nil {
		return err
	}
	l.took(began)
	var answer string
	if len(v) > 0 {
		answer, _ = v[0].(string)
	}
	switch answer {
	case "STARTED": // a new record (or a retry of one that expired)
		l.started.Add(1)
		l.remember(r)
		if l.rng.Float64() < l.cfg.CrashRate {
			l.crashed.Add(1) // the worker dies: nobody will COMPLETE it
			if l.cfg.Crashed != nil {
				l.cfg.Crashed(r.key, began)
			}
			if l.cfg.Effects != nil && l.rng.Float64() < l.cfg.CrashAfterEffect {
				l.cfg.Effects(r.key, orderRef(r.id)) // ... after creating the order
			}
			return nil
		}
		r.due = time.Now().Add(l.cfg.WorkTime)
		l.pending = append(l.pending, r)
	case "CONFLICT":
		l.conflicts.Add(1)
	default: // PROCESSING or SUCCEEDED: the client gets the stored state
		l.duplicates.Add(1)
	}
	return nil
}

// took tells Latency how long the call begun at began took.
func (l *loop) took(began time.Time) {
	if l.cfg.Latency != nil {
		l.cfg.Latency(time.Since(began))
	}
}

func (l *loop) remember(r simReq) {
	if len(l.recent) < recentRequests {
		l.recent = append(l.recent, r)
		return
	}
	l.recent[l.next] = r
	l.next = (l.next + 1) % recentRequests
}

// orderRef is the order a request creates.
func orderRef(id string) string { return "ord-" + id }

// completeDue runs COMPLETE for every request whose work is done. A failed
// completion is dropped, as a worker that could not write its result: the
// record stays PROCESSING.
func (l *loop) completeDue(ctx context.Context, now time.Time) error {
	retention := int64(l.cfg.Retention / time.Second)
	for len(l.pending) > 0 && !l.pending[0].due.After(now) {
		r := l.pending[0]
		l.pending = l.pending[1:]
		resp := fmt.Sprintf(`{"order_id":%q,"state":"created"}`, orderRef(r.id))
		if l.cfg.Effects != nil {
			l.cfg.Effects(r.key, orderRef(r.id))
		}
		opCtx, cancel := opContext(ctx)
		began := time.Now()
		n, err := Complete.Run(opCtx, l.c, []string{r.key}, r.fp, 201, resp, retention).Int64()
		cancel()
		if err != nil {
			return err
		}
		l.took(began)
		if n != 1 { // expired or changed under us: counted, not fatal
			l.errs.Add(1)
			continue
		}
		l.completed.Add(1)
	}
	return nil
}
