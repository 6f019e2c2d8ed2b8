package inspect

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Options tune a scan. Zero values take the defaults.
type Options struct {
	Count      int           // SCAN COUNT and batch size (default 1000)
	NoMemory   bool          // skip MEMORY USAGE
	InFlight   int           // pipelines in flight (default 2)
	MaxKeys    int64         // stop after this many keys (0: all)
	KeysPerSec int           // throttle (0: none)
	Pause      time.Duration // sleep between SCAN calls
	FlushAfter time.Duration // send a partial batch after this long (default 100ms)
}

func (o Options) withDefaults() Options {
	if o.Count <= 0 {
		o.Count = 1000
	}
	if o.InFlight <= 0 {
		o.InFlight = 2
	}
	if o.FlushAfter <= 0 {
		o.FlushAfter = 100 * time.Millisecond
	}
	return o
}

// Batch is a group of records from one keyspace, streamed as the scan goes.
type Batch struct {
	Keyspace     *Keyspace
	Records      []Record
	ServerTimeMs int64 // the Redis server's clock when the batch was read
}

// Coverage says how much of a keyspace a scan saw.
type Coverage struct {
	Keyspace   string
	Match      string
	Keys       int64 // distinct keys SCAN returned
	Records    int64 // records emitted
	Vanished   int64 // deleted or expired between SCAN and read
	Duplicates int64 // keys SCAN returned more than once
	Started    time.Time
	Duration   time.Duration
	Complete   bool  // the SCAN cursor went all the way round
	Limited    bool  // stopped early by MaxKeys
	MemoryOff  bool  // MEMORY USAGE skipped or refused
	Err        error // why the scan stopped early
}

// KeysPerSec is the scan rate.
func (c Coverage) KeysPerSec() float64 {
	if c.Duration <= 0 {
		return 0
	}
	return float64(c.Keys) / c.Duration.Seconds()
}

// Scan walks one keyspace with SCAN MATCH COUNT, reads each batch in
// pipelines (several in flight), and sends classified records to out. It
// does not close out. Cancel ctx to stop; the coverage says what was seen.
func Scan(ctx context.Context, c redis.UniversalClient, ks *Keyspace, opt Options, out chan<- Batch) Coverage {
	opt = opt.withDefaults()
	cov := Coverage{Keyspace: ks.Name, Match: ks.Match, Started: time.Now()}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var (
		errOnce  sync.Once
		firstErr error
		records  atomic.Int64
		vanished atomic.Int64
		memOn    atomic.Bool
	)
	memOn.Store(!opt.NoMemory)
	fail := func(err error) {
		errOnce.Do(func() { firstErr = err; cancel() })
	}
	f := &fetcher{c: c, ks: ks, memOn: &memOn}
	work := make(chan []string, opt.InFlight)
	var wg sync.WaitGroup
	for range opt.InFlight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for keys := range work {
				if ctx.Err() != nil {
					continue // drain
				}
				res, err := f.fetch(ctx, keys)
				if err != nil {
					fail(fmt.Errorf("reading %d keys: %w", len(keys), err))
					continue
				}
				vanished.Add(res.vanished)
				records.Add(int64(len(res.records)))
				if len(res.records) == 0 {
					continue
				}
				select {
				case out <- Batch{Keyspace: ks, Records: res.records, ServerTimeMs: res.nowMs}:
				case <-ctx.Done():
				}
			}
		}()
	}

	seen := newDedup()
	pending := make([]string, 0, opt.Count)
	pendingSince := time.Time{}
	send := func() bool {
		if len(pending) == 0 {
			return true
		}
		select {
		case work <- pending:
		case <-ctx.Done():
			return false
		}
		pending = make([]string, 0, opt.Count)
		return true
	}
	var cursor uint64
	limiter := newRateLimiter(opt.KeysPerSec)
scan:
	for {
		keys, next, err := c.Scan(ctx, cursor, ks.Match, int64(opt.Count)).Result()
		if err != nil {
			fail(fmt.Errorf("SCAN: %w", err))
			break
		}
		for _, k := range keys {
			if !seen.add(k) {
				cov.Duplicates++
				continue
			}
			if opt.MaxKeys > 0 && cov.Keys >= opt.MaxKeys {
				cov.Limited = true
				break scan
			}
			cov.Keys++
			if len(pending) == 0 {
				pendingSince = time.Now()
			}
			pending = append(pending, k)
			if len(pending) >= opt.Count && !send() {
				break scan
			}
		}
		if len(pending) > 0 && time.Since(pendingSince) >= opt.FlushAfter && !send() {
			break
		}
		cursor = next
		if cursor == 0 {
			cov.Complete = true
			break
		}
		if !limiter.wait(ctx, len(keys), opt.Pause) {
			break
		}
	}
	if ctx.Err() == nil {
		send()
	}
	close(work)
	wg.Wait()
	cov.Records, cov.Vanished = records.Load(), vanished.Load()
	cov.MemoryOff = !memOn.Load()
	cov.Duration = time.Since(cov.Started)
	switch {
	case firstErr != nil:
		cov.Err, cov.Complete = firstErr, false
	case ctx.Err() != nil && !cov.Complete:
		cov.Err = ctx.Err()
	}
	if cov.Err != nil || cov.Limited {
		cov.Complete = false
	}
	return cov
}

// ScanAll scans each keyspace in turn into out, then closes out.
func ScanAll(ctx context.Context, c redis.UniversalClient, kss []*Keyspace, opt Options, out chan<- Batch) []Coverage {
	defer close(out)
	covs := make([]Coverage, 0, len(kss))
	for _, ks := range kss {
		cov := Scan(ctx, c, ks, opt, out)
		covs = append(covs, cov)
		if cov.Err != nil && errors.Is(cov.Err, context.Canceled) {
			break
		}
	}
	return covs
}

// rateLimiter spaces SCAN calls so the key rate stays under a limit.
type rateLimiter struct {
	perSec int
	start  time.Time
	keys   int64
}

func newRateLimiter(perSec int) *rateLimiter {
	return &rateLimiter{perSec: perSec, start: time.Now()}
}

func (l *rateLimiter) wait(ctx context.Context, n int, pause time.Duration) bool {
	d := pause
	if l.perSec > 0 {
		l.keys += int64(n)
		due := l.start.Add(time.Duration(float64(l.keys) / float64(l.perSec) * float64(time.Second)))
		if w := time.Until(due); w > d {
			d = w
		}
	}
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
