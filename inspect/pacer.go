package inspect

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
// only one batch is read at a time. The pacer bounds that two ways:
//
//   - From the server's own clock: each pipeline is bracketed by two TIME
//     commands, so each batch says how long the server spent on it per
//     key. The next batch is capped so that its longest pipeline takes the
//     server at most burstShare of the budget: a command that arrives
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
	probeEvery   = 2 * time.Millisecond
	probeWindow  = 128                    // probes of each kind steered by…
	windowSpan   = 500 * time.Millisecond // …if this recent
	minCounted   = 8                      // fewer recent probes during the scan's commands: calm
	paceMinBatch = 10
	paceMaxBatch = 5000
	idleProbes   = 25
	maxGap       = 50 * time.Millisecond
	// A cut waits for this many new probes, so one slow probe still in
	// the window is not answered twice.
	cutSettle = 16
	// The probes' quantile the pacer steers by.
	steerQuantile = 0.9
	// Batches whose server time per key sizes the next.
	perKeyBatches = 15
)

// Fractions of the budget: one pipeline's server time, and the added
// latency above which the pacer backs off and below which it speeds up.
const (
	burstShare = 0.5
	cutAt      = 0.6
	growAt     = 0.3
)

type pacer struct {
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

// startPacer measures the idle round trip on c, then probes in the
// background until stop. start is the first batch size.
func startPacer(ctx context.Context, c redis.UniversalClient, budget time.Duration, start int) *pacer {
	p := newPacer(budget, idleRoundTrip(ctx, c), start)
	ctx, cancel := context.WithCancel(ctx)
	p.stopped = func() { cancel(); p.wg.Wait() }
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		probeLoop(ctx, c, probeEvery, p.isBusy, func(busy bool, rtt time.Duration) { p.observe(time.Now(), busy, rtt) })
	}()
	return p
}

func newPacer(budget, idle time.Duration, start int) *pacer {
	return &pacer{budget: budget, idle: idle, size: min(max(start, paceMinBatch), paceMaxBatch), fresh: cutSettle}
}

func (p *pacer) stop() { p.stopped() }

// Probe PINGs c every interval until ctx ends and hands each round trip to
// seen: what another client's command waits, queueing included. A failed
// PING is skipped; it says nothing about queueing. The benchmark harness
// measures with the same probe the pacer steers by.
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
func (p *pacer) observe(now time.Time, busy bool, rtt time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if busy {
		p.during.add(now, rtt)
		p.fresh++
	} else {
		p.apart.add(now, rtt)
	}
}

func (p *pacer) isBusy() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.busy
}

// begin marks a command of the scan's (SCAN or a batch read) as out.
func (p *pacer) begin() {
	p.mu.Lock()
	p.busy = true
	p.mu.Unlock()
}

// end marks it back.
func (p *pacer) end() {
	p.mu.Lock()
	p.busy = false
	p.mu.Unlock()
}

// added is what the scan adds to another client's high round trips now,
// and whether enough probes overlapped its commands to say. Too few: the
// scan was mostly idle, so it cannot have been in anyone's way.
func (p *pacer) added(now time.Time) (time.Duration, int, bool) {
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

// served tells the pacer how long the server spent on the last batch's
// main pipeline (0: not measured).
func (p *pacer) served(keys int, span time.Duration) {
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

// adjust sizes the next batch and the pause before it.
func (p *pacer) adjust() (int, time.Duration) { return p.adjustAt(time.Now()) }

func (p *pacer) adjustAt(now time.Time) (int, time.Duration) {
	added, fresh, known := p.added(now)
	switch {
	case known && added > time.Duration(float64(p.budget)*cutAt):
		if fresh >= cutSettle {
			p.mu.Lock()
			p.fresh = 0
			p.mu.Unlock()
			if p.size > paceMinBatch {
				p.size = max(paceMinBatch, p.size*6/10)
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
			p.size = min(paceMaxBatch, p.size+max(1, p.size/16))
		}
	}
	if p.perKey > 0 {
		limit := int(float64(p.budget) * burstShare / float64(p.perKey))
		p.size = min(p.size, max(limit, paceMinBatch))
	}
	return p.size, p.gap
}
