// Package pace keeps a scan within a latency budget instead of a
// throttle: each batch sized from the server's own clock, and a probe on a
// connection of its own backing off when other clients would wait.
//
// Floor 0 of ARCHITECTURE.md, a foundation: it imports nothing of
// idemctl's.
package pace

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// A latency budget instead of a throttle. Redis runs one command at a time,
// so what another client waits behind a scan is the server work of the
// scan's commands read before its own: one pipeline's worth at most, since
// only one batch is read at a time. The Pacer bounds that two ways:
//
//   - From the server's own clock: each pipeline is bracketed by two TIME
//     commands, so each batch says how long the server spent on it per
//     key. The next batch is capped so that its longest pipeline takes the
//     server at most BurstShare of the budget: a command that arrives
//     behind it waits no longer than that.
//   - From what another client sees, as a safety net: a PING on a
//     connection of its own, every probeEvery. Probes sent while one of
//     the scan's commands was out are compared with those sent while none
//     was, over the same recent time, at steerQuantile: the difference is
//     what the scan adds. (A high quantile of the difference of two small
//     windows is mostly noise on a shared machine, where the slow probes
//     are someone else's; backing off from them would cost rate and buy
//     nothing.) Above cutAt of the budget the batch shrinks and, once at
//     its floor, a gap between batches grows; below growAt the gap
//     shrinks first, then the batch grows up to the cap.

const (
	probeEvery  = 2 * time.Millisecond
	probeWindow = 128                    // probes of each kind steered by…
	windowSpan  = 500 * time.Millisecond // …if this recent
	minCounted  = 8                      // fewer recent probes during the scan's commands: calm
	MinBatch    = 10
	MaxBatch    = 5000
	idleProbes  = 25
	maxGap      = 50 * time.Millisecond
	// A cut waits for this many new probes, so one slow probe still in
	// the window is not answered twice.
	cutSettle = 16
	// The probes' quantile the Pacer steers by.
	steerQuantile = 0.9
	// Batches whose server time per key sizes the next.
	perKeyBatches = 15
)

// Fractions of the budget: one pipeline's server time, and the added
// latency above which the Pacer backs off and below which it speeds up.
const (
	BurstShare = 0.5
	cutAt      = 0.6
	growAt     = 0.3
)

type Pacer struct {
	budget  time.Duration
	idle    time.Duration // the probe's median round trip before the scan started
	size    int           // keys per SCAN COUNT and pipeline now
	gap     time.Duration // pause between batches now
	perKey  time.Duration // server time per key: the median of recent batches
	recent  [perKeyBatches]time.Duration
	nRecent int

	mu      sync.Mutex
	during  window // probes that waited while a command of the scan's was out
	apart   window // probes that did not
	fresh   int    // probes during the scan's commands since the last cut
	busy    bool   // a command of the scan's is out
	stopped func()
	wg      sync.WaitGroup
}

// window is a ring of recent probes: when each came back, its round trip.
type window struct {
	at   [probeWindow]time.Time
	rtt  [probeWindow]time.Duration
	next int
}

func (w *window) add(at time.Time, rtt time.Duration) {
	w.at[w.next], w.rtt[w.next] = at, rtt
	w.next = (w.next + 1) % probeWindow
}

// quantile is the q-quantile of the round trips of the probes since
// `since`, and how many there were.
func (w *window) quantile(since time.Time, q float64) (time.Duration, int) {
	var rtts []time.Duration
	for i, at := range w.at {
		if !at.IsZero() && !at.Before(since) {
			rtts = append(rtts, w.rtt[i])
		}
	}
	if len(rtts) == 0 {
		return 0, 0
	}
	slices.Sort(rtts)
	return rtts[min(int(q*float64(len(rtts))), len(rtts)-1)], len(rtts)
}

// Start measures the idle round trip on c, then probes in the
// background until Stop. start is the first batch size.
func Start(ctx context.Context, c redis.UniversalClient, budget time.Duration, start int) *Pacer {
	p := New(budget, idleRoundTrip(ctx, c), start)
	ctx, cancel := context.WithCancel(ctx)
	p.stopped = func() { cancel(); p.wg.Wait() }
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		probeLoop(ctx, c, probeEvery, p.isBusy, func(busy bool, rtt time.Duration) { p.observe(time.Now(), busy, rtt) })
	}()
	return p
}

// New is a pacer without its probe (Start runs one), for tests and for
// steering from observations alone.
func New(budget, idle time.Duration, start int) *Pacer {
	return &Pacer{budget: budget, idle: idle, size: min(max(start, MinBatch), MaxBatch), fresh: cutSettle}
}

// Stop ends the probe.
func (p *Pacer) Stop() { p.stopped() }

// Size is the batch size the pacer starts from, or last set.
func (p *Pacer) Size() int { return p.size }

// Probe PINGs c every interval until ctx ends and hands each round trip to
// seen: what another client's command waits, queueing included. A failed
// PING is skipped; it says nothing about queueing. The benchmark harness
// measures with the same probe the Pacer steers by.
func Probe(ctx context.Context, c redis.UniversalClient, every time.Duration, seen func(time.Duration)) {
	probeLoop(ctx, c, every, func() bool { return false }, func(_ bool, rtt time.Duration) { seen(rtt) })
}

// probeLoop is Probe that also asks sending() just before each PING goes
// out and hands its answer on with the round trip.
func probeLoop(ctx context.Context, c redis.UniversalClient, every time.Duration, sending func() bool, seen func(bool, time.Duration)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		mark := sending()
		began := time.Now()
		if c.Ping(ctx).Err() == nil {
			seen(mark, time.Since(began))
		}
	}
}

// idleRoundTrip is the median PING round trip with nothing of ours running.
func idleRoundTrip(ctx context.Context, c redis.UniversalClient) time.Duration {
	var rtts []time.Duration
	for range idleProbes {
		began := time.Now()
		if c.Ping(ctx).Err() == nil {
			rtts = append(rtts, time.Since(began))
		}
	}
	if len(rtts) == 0 {
		return 0
	}
	slices.Sort(rtts)
	return rtts[len(rtts)/2]
}

// observe files one probe that came back at now: during the scan's
// commands if one was out when it was sent. (Not "at any time while it
// waited": a slow probe would then count as the scan's whatever slowed it.)
func (p *Pacer) observe(now time.Time, busy bool, rtt time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if busy {
		p.during.add(now, rtt)
		p.fresh++
	} else {
		p.apart.add(now, rtt)
	}
}

func (p *Pacer) isBusy() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.busy
}

// Begin marks a command of the scan's (SCAN or a batch read) as out.
func (p *Pacer) Begin() {
	p.mu.Lock()
	p.busy = true
	p.mu.Unlock()
}

// End marks it back.
func (p *Pacer) End() {
	p.mu.Lock()
	p.busy = false
	p.mu.Unlock()
}

// added is what the scan adds to another client's high round trips now,
// and whether enough probes overlapped its commands to say. Too few: the
// scan was mostly idle, so it cannot have been in anyone's way.
func (p *Pacer) added(now time.Time) (time.Duration, int, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	since := now.Add(-windowSpan)
	during, n := p.during.quantile(since, steerQuantile)
	if n < minCounted {
		return 0, p.fresh, false
	}
	base, m := p.apart.quantile(since, steerQuantile)
	if m < minCounted {
		base = p.idle // busy all the time: the idle level before the scan
	}
	return during - base, p.fresh, true
}

// Served tells the Pacer how long the server spent on the last batch's
// main pipeline (0: not measured).
func (p *Pacer) Served(keys int, span time.Duration) {
	if keys <= 0 || span <= 0 {
		return
	}
	// The median, not a mean: a batch during which the server was
	// descheduled, or waited for the rest of the pipeline to arrive,
	// reads several times the true cost, and a mean of those halved the
	// batch size for a dozen batches after each one.
	p.recent[p.nRecent%perKeyBatches] = span / time.Duration(keys)
	p.nRecent++
	n := min(p.nRecent, perKeyBatches)
	sorted := p.recent
	slices.Sort(sorted[:n])
	p.perKey = sorted[n/2]
}

// Adjust sizes the next batch and the pause before it.
func (p *Pacer) Adjust() (int, time.Duration) { return p.adjustAt(time.Now()) }

func (p *Pacer) adjustAt(now time.Time) (int, time.Duration) {
	added, fresh, known := p.added(now)
	switch {
	case known && added > time.Duration(float64(p.budget)*cutAt):
		if fresh >= cutSettle {
			p.mu.Lock()
			p.fresh = 0
			p.mu.Unlock()
			if p.size > MinBatch {
				p.size = max(MinBatch, p.size*6/10)
			} else {
				p.gap = min(maxGap, max(p.gap*2, time.Millisecond))
			}
		}
	case !known || added < time.Duration(float64(p.budget)*growAt):
		if p.gap > 0 {
			if p.gap = p.gap * 7 / 8; p.gap < 100*time.Microsecond {
				p.gap = 0
			}
		} else {
			p.size = min(MaxBatch, p.size+max(1, p.size/16))
		}
	}
	if p.perKey > 0 {
		limit := int(float64(p.budget) * BurstShare / float64(p.perKey))
		p.size = min(p.size, max(limit, MinBatch))
	}
	return p.size, p.gap
}
