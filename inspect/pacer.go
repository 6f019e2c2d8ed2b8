package inspect

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// A latency budget instead of a throttle. Redis runs one command at a time,
// so what another client waits behind a scan is the server work of the
// scan's commands that were read before its own: one pipeline's worth at
// most when only one is in flight. The pacer keeps that burst small enough
// by watching what another client would see — a PING on a connection of
// its own, every probeEvery — and sizing the next SCAN and pipeline from
// it: smaller at once when a probe waited more than three quarters of the
// budget above the idle level, a little larger while probes stay well
// under it. Only one batch is read at a time, so bursts never stack.

const (
	probeEvery   = 2 * time.Millisecond
	paceMinBatch = 10
	paceMaxBatch = 5000
	idleProbes   = 15
)

type pacer struct {
	budget time.Duration
	idle   time.Duration // the probe's round trip before the scan started
	size   int           // keys per SCAN COUNT and pipeline now

	worst  atomic.Int64 // the largest excess over idle (ns) since the last adjust
	probes atomic.Int64 // probes since the last adjust

	stop func()
	wg   sync.WaitGroup
}

// startPacer measures the idle round trip on c, then probes in the
// background until stop. start is the first batch size.
func startPacer(ctx context.Context, c redis.UniversalClient, budget time.Duration, start int) *pacer {
	p := &pacer{budget: budget, size: min(max(start, paceMinBatch), paceMaxBatch)}
	p.idle = idleRoundTrip(ctx, c)
	ctx, cancel := context.WithCancel(ctx)
	p.stop = func() { cancel(); p.wg.Wait() }
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		Probe(ctx, c, probeEvery, p.observe)
	}()
	return p
}

// Probe PINGs c every interval until ctx ends and hands each round trip to
// seen: what another client's command waits, queueing included. A failed
// PING is skipped; it says nothing about queueing. The benchmark harness
// measures with the same probe the pacer steers by.
func Probe(ctx context.Context, c redis.UniversalClient, every time.Duration, seen func(time.Duration)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		began := time.Now()
		if c.Ping(ctx).Err() == nil {
			seen(time.Since(began))
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

// observe records one probe's round trip.
func (p *pacer) observe(rtt time.Duration) {
	p.probes.Add(1)
	excess := int64(rtt - p.idle)
	for {
		w := p.worst.Load()
		if excess <= w || p.worst.CompareAndSwap(w, excess) {
			return
		}
	}
}

// adjust sizes the next batch from the probes since the last one: cut by
// 40 % when one waited more than 3/4 of the budget beyond idle, grown by
// 1/8 when every probe stayed under 1/3 of it. No probe, no change.
func (p *pacer) adjust() int {
	worst, n := time.Duration(p.worst.Swap(0)), p.probes.Swap(0)
	switch {
	case n == 0:
	case worst > p.budget*3/4:
		p.size = max(paceMinBatch, p.size*6/10)
	case worst < p.budget/3:
		p.size = min(paceMaxBatch, p.size+max(1, p.size/8))
	}
	return p.size
}
