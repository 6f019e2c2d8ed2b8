package inspect

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Options tune a scan. Zero values take the defaults.
type Options struct {
	Count    int   // SCAN COUNT and batch size (default DefaultScanCount)
	NoMemory bool  // skip MEMORY USAGE
	InFlight int   // pipelines in flight (default 4; 1 when throttled)
	MaxKeys  int64 // stop after this many keys (0: all)
	// Sample stops each node's scan once this share of its keyspace
	// (0 < Sample < 1) has been visited, from a random starting point, so
	// that what was read is a uniform sample; SampleTime stops it after
	// this long. Either makes the coverage Sampled, with its share.
	Sample     float64
	SampleTime time.Duration
	// SampleStart, when set, chooses the starting point (tests); by
	// default it is random.
	SampleStart func() uint64
	KeysPerSec  int           // throttle (0: none)
	Pause       time.Duration // sleep between SCAN calls
	// MaxLatency is a latency budget: what another client's command may
	// wait behind the scan, above the idle level. The scan reads one batch
	// at a time, sized from what a probe connection sees (0: no budget).
	MaxLatency time.Duration
	FlushAfter time.Duration // send a partial batch after this long (default 100ms)
	Replicas   bool          // scan one replica per shard instead of the primaries
	MaxNodes   int           // cluster nodes scanned at a time (default 3)
	// Progress, if set, is told how far the scan has come after each batch,
	// in the goroutine that reads the batches (Scan's caller).
	Progress func(Progress)
	// ResponseSizes measures every record's response length. Without it a
	// hash record's is measured only when MEMORY USAGE says the record could
	// hold a response above the large-response threshold.
	ResponseSizes bool
	// Snapshot, when set, is read instead of the server: the client may be
	// nil, and every record is judged at the snapshot's time.
	Snapshot *SnapshotSource
	// Versions: a snapshot's batches carry each record's version
	// (Batch.Versions), for writes pinned to what the file held. The
	// snapshot must be opened with SnapshotSpec.Versions.
	Versions bool
}

// WithDefaults fills the zero values with the defaults.
func (o Options) WithDefaults() Options {
	if o.Count <= 0 {
		o.Count = DefaultScanCount
	}
	if o.InFlight <= 0 {
		o.InFlight = 4
		if o.KeysPerSec > 0 || o.Pause > 0 || o.MaxLatency > 0 {
			// A throttled scan has time to spare: one pipeline at a time
			// keeps the queue another client's command waits behind short.
			o.InFlight = 1
		}
	}
	if o.FlushAfter <= 0 {
		o.FlushAfter = 100 * time.Millisecond
	}
	if o.MaxNodes <= 0 {
		o.MaxNodes = 3
	}
	return o
}

// Batch is a group of records from one keyspace, streamed as the scan goes.
type Batch struct {
	Keyspace     *Keyspace
	Node         string // the server it was read from
	Records      []Record
	Versions     []RecordVersion // with Options.Versions (snapshots): one per record
	ServerTimeMs int64           // the Redis server's clock when the batch was read
	// Done is the share of the whole scan (every keyspace on every node)
	// visited when the batch was read, from the SCAN cursors: for progress
	// lines and estimates of what is left.
	Done float64
}

// Coverage says how much of a keyspace a scan saw.
type Coverage struct {
	Keyspace   string
	Match      string
	Node       string // server address
	Role       string // primary | replica
	Slots      string // cluster slot ranges this node serves
	Lag        string // replicas: how far behind the primary
	Keys       int64  // distinct keys SCAN returned
	Records    int64  // records emitted
	Vanished   int64  // deleted or expired between SCAN and read
	Expired    int64  // snapshots: expired at the snapshot's time, counted, not shown
	Duplicates int64  // keys SCAN returned more than once
	Companions int64  // lock keys, counted with their records, not as records
	Started    time.Time
	Duration   time.Duration
	Complete   bool    // the SCAN cursor went all the way round
	Limited    bool    // stopped early by MaxKeys
	Sampled    bool    // stopped early by Sample or SampleTime: a uniform sample
	Share      float64 // the share of the keyspace visited (1 when complete)
	MemoryOff  bool    // MEMORY USAGE skipped or refused
	Err        error   // why the scan stopped early
}

// KeysPerSec is the scan rate.
func (c Coverage) KeysPerSec() float64 {
	if c.Duration <= 0 {
		return 0
	}
	return float64(c.Keys) / c.Duration.Seconds()
}

// scanNode walks one keyspace on one server with SCAN MATCH COUNT, reads
// each batch in pipelines (several in flight), and sends classified records
// to out. seen is shared by the nodes of a scan so a key met twice (a slot
// migrating mid-scan) is reported once. Cancel ctx to stop.
func scanNode(ctx context.Context, n node, ks *Keyspace, opt Options, out chan<- Batch, seen *dedup, prog *progress, task int) Coverage {
	c := n.client
	cov := Coverage{Keyspace: ks.Name, Match: ks.Match, Node: n.addr, Role: n.role, Slots: n.slots, Started: time.Now()}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	startID := runID(ctx, c)

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
	f := &fetcher{c: c, ks: ks, memOn: &memOn, respAll: opt.ResponseSizes, span: opt.MaxLatency > 0}
	// Under a latency budget each batch is read before the next SCAN, its
	// size set by the pacer; otherwise batches of opt.Count overlap.
	count := opt.Count
	var pace *pacer
	if opt.MaxLatency > 0 {
		pace = startPacer(ctx, c, opt.MaxLatency, min(opt.Count, 100))
		defer pace.stop()
		count = pace.size
	}
	read := func(j job) {
		if ctx.Err() != nil {
			return // drain
		}
		if pace != nil {
			pace.begin()
		}
		var (
			res fetched
			err error
		)
		if j.locks {
			res, err = f.fetchOrphans(ctx, j.keys)
		} else {
			res, err = f.fetchAhead(ctx, j.keys, j.ahead)
		}
		if pace != nil {
			pace.end()
			pace.served(len(j.keys), res.serverSpan) // one batch at a time: no race
		}
		if err != nil {
			fail(fmt.Errorf("reading %d keys: %w", len(j.keys), err))
			return
		}
		vanished.Add(res.vanished)
		records.Add(int64(len(res.records)))
		if len(res.records) == 0 {
			return
		}
		select {
		case out <- Batch{Keyspace: ks, Node: n.addr, Records: res.records, ServerTimeMs: res.nowMs, Done: prog.done()}:
		case <-ctx.Done():
		}
	}
	work := make(chan job, opt.InFlight)
	var wg sync.WaitGroup
	for range opt.InFlight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				read(j)
				if j.done != nil {
					close(j.done)
				}
			}
		}()
	}

	pending := make([]string, 0, count)
	var locks []string // companion lock keys, checked for orphans
	pendingSince := time.Time{}
	send := func(ahead *scanAhead) bool {
		var waits []chan struct{}
		for _, j := range []job{{keys: pending, ahead: ahead}, {keys: locks, locks: true}} {
			if len(j.keys) == 0 {
				continue
			}
			if pace != nil {
				j.done = make(chan struct{})
				waits = append(waits, j.done)
			}
			select {
			case work <- j:
			case <-ctx.Done():
				return false
			}
		}
		for _, w := range waits {
			select {
			case <-w:
			case <-ctx.Done():
				return false
			}
		}
		pending, locks = make([]string, 0, count), nil
		return true
	}
	lock := ks.Schema.Lock
	var cursor uint64
	smp := newSampling(opt)
	if smp != nil {
		cursor = smp.start
	}
	limiter := newRateLimiter(opt.KeysPerSec)
	var ahead *scanAhead // this turn's SCAN, already read with the last batch
scan:
	for {
		var (
			keys []string
			next uint64
			err  error
		)
		if ahead != nil {
			keys, next, err = ahead.cmd.Result()
			ahead = nil
		} else {
			if pace != nil {
				pace.begin()
			}
			keys, next, err = c.Scan(ctx, cursor, ks.Match, int64(count)).Result()
			if pace != nil {
				pace.end()
			}
		}
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
			if len(pending) == 0 && len(locks) == 0 {
				pendingSince = time.Now()
			}
			if lock != nil {
				if _, isLock := lock.RecordKey(k); isLock {
					cov.Companions++ // shown with its record, counted once
					if lock.Orphans {
						locks = append(locks, k)
					}
					if len(locks) >= count && !send(nil) {
						break scan
					}
					continue
				}
			}
			pending = append(pending, k)
			if len(pending) >= count && !send(nil) {
				break scan
			}
		}
		var gap time.Duration
		if pace != nil {
			count, gap = pace.adjust()
		}
		if len(pending)+len(locks) > 0 && (pace != nil || time.Since(pendingSince) >= opt.FlushAfter) {
			// Under a budget the next SCAN rides with this batch's last
			// pipeline; if the scan stops here its reply goes unused.
			var a *scanAhead
			if pace != nil && len(pending) > 0 && (next != 0 || smp != nil) {
				a = &scanAhead{cursor: next, match: ks.Match, count: int64(count)}
			}
			if !send(a) {
				break
			}
			if a != nil && a.cmd != nil {
				ahead = a
			}
		}
		cursor = next
		switch {
		case smp != nil: // past the end of the table order it goes on from 0
			share, done := smp.after(next, cov.Started)
			prog.set(task, share)
			if done {
				cov.Sampled, cov.Share = true, share
				break scan
			}
		case cursor == 0:
			cov.Complete = true
			prog.set(task, 1)
			break scan
		default:
			prog.set(task, CursorShare(cursor))
		}
		if seen.needPlan() {
			seen.plan(dedupEstimate(opt, n, cov.Keys, prog.get(task), time.Since(cov.Started)))
		}
		if !limiter.wait(ctx, len(keys), max(opt.Pause, gap)) {
			break
		}
	}
	if ctx.Err() == nil {
		send(nil)
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
	case startID != "":
		// A SCAN cursor means nothing to another process: a restart or
		// failover mid-scan can miss keys, so say so.
		if end := runID(ctx, c); end != "" && end != startID {
			cov.Err = fmt.Errorf("%s restarted or failed over during the scan: keys may be missing; rescan", n.addr)
		}
	}
	if n.role == "replica" {
		cov.Lag = replicaLag(ctx, c)
	}
	if cov.Sampled && cov.Share >= 1 {
		cov.Sampled, cov.Complete = false, cov.Err == nil // a sample of everything is the whole
	}
	if cov.Err != nil || cov.Limited || cov.Sampled {
		cov.Complete = false
	}
	switch {
	case cov.Complete:
		cov.Share = 1
	case !cov.Sampled:
		cov.Share = prog.get(task) // how far it got before it stopped
	}
	return cov
}

// ScanAll scans each keyspace in turn on every node (every cluster primary,
// or one replica per shard with opt.Replicas; a bounded number at a time)
// into out, then closes out. It returns one coverage per keyspace and node;
// a node lost or a topology change during the scan makes coverage
// incomplete with the slots concerned, never silently short.
func ScanAll(ctx context.Context, c redis.UniversalClient, kss []*Keyspace, opt Options, out chan<- Batch) []Coverage {
	defer close(out)
	opt = opt.WithDefaults()
	if opt.Snapshot != nil {
		return scanSnapshot(ctx, opt.Snapshot, kss, opt, out)
	}
	nodes, topo, err := discover(ctx, c, opt.Replicas)
	if err != nil {
		covs := make([]Coverage, len(kss))
		for i, ks := range kss {
			covs[i] = Coverage{Keyspace: ks.Name, Match: ks.Match, Started: time.Now(), Err: err}
		}
		return covs
	}
	defer func() {
		for _, n := range nodes {
			if n.owned {
				n.client.Close()
			}
		}
	}()
	var covs []Coverage
	prog := newProgress(len(kss) * len(nodes))
	for ki, ks := range kss {
		seen := newDedup()
		kc := make([]Coverage, len(nodes))
		sem := make(chan struct{}, opt.MaxNodes)
		var wg sync.WaitGroup
		for i, n := range nodes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				select {
				case sem <- struct{}{}:
				case <-ctx.Done():
					kc[i] = Coverage{Keyspace: ks.Name, Match: ks.Match, Node: n.addr, Role: n.role, Slots: n.slots, Err: ctx.Err()}
					return
				}
				defer func() { <-sem }()
				kc[i] = scanNode(ctx, n, ks, opt, out, seen, prog, ki*len(nodes)+i)
			}()
		}
		wg.Wait()
		seen.free() // the keyspaces are scanned in turn: one table at a time
		covs = append(covs, kc...)
		if ctx.Err() != nil {
			break
		}
	}
	if topo != nil {
		markMoved(ctx, c, topo, covs)
	}
	return covs
}

// markMoved compares the slot map after the scan with the one before: any
// slot that changed hands may have had keys the scan missed.
func markMoved(ctx context.Context, c redis.UniversalClient, before topology, covs []Coverage) {
	cc, ok := c.(*redis.ClusterClient)
	if !ok || ctx.Err() != nil {
		return
	}
	slots, err := cc.ClusterSlots(ctx).Result()
	if err != nil {
		return
	}
	moved, involved := before.moved(slotTopology(slots))
	if len(moved) == 0 {
		return
	}
	for i := range covs {
		if covs[i].Err == nil && involved[covs[i].Node] {
			covs[i].Complete = false
			covs[i].Err = fmt.Errorf("slots moved during the scan (%s): keys may be missing; rescan", strings.Join(moved, ", "))
		}
	}
}

// job is a batch of keys for a fetch worker: records, or lock companions.
type job struct {
	keys  []string
	ahead *scanAhead // the next SCAN, sent with this batch's last pipeline
	locks bool
	done  chan struct{} // closed once read, when the scan waits for it
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
