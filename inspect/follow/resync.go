package follow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/idemctl/idemctl/inspect"
)

// maybeResync starts the pending re-sync once every watch connection is
// up and every primary watched (a pass before then could miss what
// changes until it is) and the backoff since the last attempt has passed.
func (f *Follower) maybeResync(ctx context.Context) bool {
	if f.down.Load() > 0 || f.rediscover.Load() || time.Since(f.lastTry) < f.backoff {
		if f.live {
			f.live = false // not all-clear from now on, even before the pass
			f.setStats(func(s *Stats) { s.Live = false })
			return f.emit(ctx, Update{Kind: KindResync, Reason: f.pend.need() + " (waiting to re-sync)"})
		}
		return true
	}
	return f.resync(ctx)
}

// resync runs a full pass: every record read is upserted, every record it
// did not see removed. An incomplete pass leaves the view not Live and
// the next attempt further off.
func (f *Follower) resync(ctx context.Context) bool {
	reason := f.pend.startResync()
	f.lastTry, f.live = time.Now(), false
	f.setStats(func(s *Stats) { s.Live = false; s.Resyncs++ })
	if !f.emit(ctx, Update{Kind: KindResync, Reason: reason}) {
		return false
	}
	f.v.gen++
	err, ok := f.pass(ctx)
	if !ok {
		return false
	}
	if err != nil {
		f.backoff = min(f.backoff*2, 30*time.Second)
		f.pend.setReason("re-sync incomplete: " + err.Error())
		return true
	}
	f.backoff = f.opt.ResyncMin
	for _, r := range f.v.sweep() {
		u := Update{Kind: KindRemove, Key: r.key, Keyspace: f.kss[r.ks], Was: r.was}
		if !f.emit(ctx, u) {
			return false
		}
	}
	if f.pend.need() != "" {
		return true // something was missed during the pass: another one
	}
	f.live = true
	n := len(f.v.m)
	f.setStats(func(s *Stats) { s.Live, s.LastResync, s.Records = true, time.Now(), n })
	return f.emit(ctx, Update{Kind: KindResyncDone, Records: n})
}

// pass scans every keyspace, upserting each record and serving the stale
// deadlines meanwhile; err says why it is incomplete, ok=false: ctx ended.
func (f *Follower) pass(ctx context.Context) (err error, ok bool) {
	batches := make(chan inspect.Batch, 4)
	covs := make(chan []inspect.Coverage, 1)
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { covs <- inspect.ScanAll(pctx, f.c, f.kss, f.opt.Scan, batches) }()
	stale := time.NewTimer(time.Hour)
	defer stale.Stop()
	for {
		f.armStale(stale)
		select {
		case <-ctx.Done():
			return nil, false
		case <-stale.C:
			if !f.fireStale(ctx) {
				return nil, false
			}
		case b, more := <-batches:
			if !more {
				return incomplete(<-covs), true
			}
			if !f.apply(ctx, b, nil) {
				return nil, false
			}
		}
	}
}

// incomplete is why a pass did not see everything (nil: it did).
func incomplete(covs []inspect.Coverage) error {
	for _, c := range covs {
		if c.Err != nil {
			return fmt.Errorf("%s: %w", c.Node, c.Err)
		}
		if !c.Complete {
			return fmt.Errorf("%s: the scan did not complete", c.Node)
		}
	}
	return nil
}

// apply upserts a batch's records and, for a read of changed keys, removes
// the keys asked that it does not hold.
func (f *Follower) apply(ctx context.Context, b inspect.Batch, asked []string) bool {
	ks := f.index(b.Keyspace)
	now := f.rel()
	var got map[string]bool
	if asked != nil {
		got = make(map[string]bool, len(b.Records))
	}
	for i := range b.Records {
		rec := &b.Records[i]
		was := f.v.upsert(ks, rec, now, b.ServerTimeMs)
		if got != nil {
			got[rec.Key] = true
		}
		if !f.emit(ctx, Update{Kind: KindUpsert, Record: *rec, Key: rec.Key, Keyspace: rec.Keyspace, Was: was}) {
			return false
		}
	}
	for _, k := range asked {
		if got[k] {
			continue
		}
		if was, had := f.v.remove(ks, k); had {
			if !f.emit(ctx, Update{Kind: KindRemove, Key: k, Keyspace: b.Keyspace, Was: was}) {
				return false
			}
		}
	}
	return true
}

func (f *Follower) index(ks *inspect.Keyspace) uint8 {
	for i, k := range f.kss {
		if k == ks {
			return uint8(i)
		}
	}
	return 0
}

// readChanged reads the keys changed since the last window, per keyspace
// and in batches; a failed read costs a re-sync.
func (f *Follower) readChanged(ctx context.Context) bool {
	keys := f.pend.takeKeys()
	if len(keys) == 0 {
		return true
	}
	for _, ks := range f.kss {
		mine, locks := split(ks, keys)
		for len(mine) > 0 {
			n := min(len(mine), f.opt.Scan.Count)
			if !f.readBatch(ctx, ks, mine[:n]) {
				return ctx.Err() == nil
			}
			if !f.fireStale(ctx) { // deadlines stay on time behind a long read
				return false
			}
			mine = mine[n:]
		}
		if !f.readLocks(ctx, ks, locks) {
			return ctx.Err() == nil
		}
	}
	return true
}

// readBatch reads one batch; false when it failed (a re-sync is pending)
// or ctx ended.
func (f *Follower) readBatch(ctx context.Context, ks *inspect.Keyspace, keys []string) bool {
	if f.lim != nil {
		if err := f.lim.WaitN(ctx, len(keys)); err != nil && !errors.Is(err, context.Canceled) {
			// a batch above the burst: wait for it in parts
			for range keys {
				if f.lim.Wait(ctx) != nil {
					return false
				}
			}
		}
	}
	b, err := inspect.ReadKeys(ctx, f.c, ks, keys, f.opt.Scan)
	f.setStats(func(s *Stats) { s.Reads += int64(len(keys)) })
	if err != nil {
		if ctx.Err() == nil {
			f.pend.missed("read", fmt.Sprintf("reading %d changed keys failed: %v", len(keys), err))
		}
		return false
	}
	b.Keyspace = ks
	return f.apply(ctx, b, keys)
}
