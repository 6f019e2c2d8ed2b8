package inspect

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/time/rate"

	"github.com/idemctl/idemctl/inspect/dedup"
	"github.com/idemctl/idemctl/inspect/pace"
	"github.com/idemctl/idemctl/inspect/topology"
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
	// Snapshot, when set, is read instead of the server (a snapshot file,
	// inspect/snapshot): the client may be nil, and every record is judged
	// at the snapshot's time.
	Snapshot KeySource
	// Versions: a snapshot's batches carry each record's version
	// (Batch.Versions), for writes pinned to what the file held. The
	// snapshot must be opened with snapshot.Spec.Versions.
	Versions bool
	// ReadPath chooses how batches are read from a live server: ReadAuto
	// (the default), ReadClient or ReadScript (scriptpath.go).
	ReadPath string
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
	if o.ReadPath == "" {
		o.ReadPath = ReadAuto
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
	ReadPath   string  // how the records were read: script, client, or client and why
	Err        error   // why the scan stopped early
}

// KeysPerSec is the scan rate.
func (c Coverage) KeysPerSec() float64 {
	if c.Duration <= 0 {
		return 0
	}
	return float64(c.Keys) / c.Duration.Seconds()
}

// scanNode walks one keyspace on one server with SCAN MATCH COUNT (the
// key source, scanwalk.go), reads each batch in pipelines, several in
// flight (the record reader, scanread.go), and sends classified records
// to out. seen is shared by the nodes of a scan so a key met twice (a slot
// migrating mid-scan) is reported once. Cancel ctx to stop.
func scanNode(ctx context.Context, n topology.Node, ks *Keyspace, opt Options, out chan<- Batch, seen *dedup.Set, prog *progress, task int) Coverage {
	s := &nodeScan{n: n, ks: ks, opt: opt, out: out, seen: seen, prog: prog, task: task, count: opt.Count,
		cov: Coverage{Keyspace: ks.Name, Match: ks.Match, Node: n.Addr, Role: n.Role, Slots: n.Slots, Started: time.Now()}}
	s.ctx, s.cancel = context.WithCancel(ctx)
	defer s.cancel()
	startID := topology.RunID(s.ctx, n.Client)
	s.memOn.Store(!opt.NoMemory)
	s.f = &fetcher{c: n.Client, ks: ks, memOn: &s.memOn, respAll: opt.ResponseSizes, span: opt.MaxLatency > 0}
	var err error
	if s.f.script, s.refused, err = probeScript(s.ctx, n.Client, opt.ReadPath, opt.MaxLatency, n.NSlots > 0); err != nil {
		s.fail(err)
		return s.finish(startID)
	}
	// Under a latency budget each batch is read before the next SCAN, its
	// size set by the pacer; otherwise batches of opt.Count overlap.
	if opt.MaxLatency > 0 {
		s.pace = pace.Start(s.ctx, n.Client, opt.MaxLatency, min(opt.Count, 100))
		defer s.pace.Stop()
		s.count = s.pace.Size()
	}
	s.startReaders()
	s.pending = make([]string, 0, s.count)
	s.walk()
	if s.ctx.Err() == nil {
		s.send(nil)
	}
	close(s.work)
	s.wg.Wait()
	return s.finish(startID)
}

// nodeScan is one keyspace's scan of one node: the SCAN walk on the
// caller's goroutine feeding batches of keys to opt.InFlight readers.
type nodeScan struct {
	ctx    context.Context
	cancel context.CancelFunc
	n      topology.Node
	ks     *Keyspace
	opt    Options
	out    chan<- Batch
	seen   *dedup.Set
	prog   *progress
	task   int
	cov    Coverage
	f      *fetcher
	pace   *pace.Pacer // nil: no latency budget
	// refused is why the server refused the script read path, if it did.
	refused string
	count   int // keys per SCAN and per batch (the pacer's, under a budget)

	work     chan job
	wg       sync.WaitGroup
	errOnce  sync.Once
	firstErr error
	records  atomic.Int64
	vanished atomic.Int64
	memOn    atomic.Bool

	pending      []string // keys for the next batch
	locks        []string // companion lock keys, checked for orphans
	pendingSince time.Time
}

// fail stops the scan at its first error.
func (s *nodeScan) fail(err error) {
	s.errOnce.Do(func() { s.firstErr = err; s.cancel() })
}

// finish is the coverage of what the scan saw and why it stopped.
func (s *nodeScan) finish(startID string) Coverage {
	cov := &s.cov
	cov.Records, cov.Vanished = s.records.Load(), s.vanished.Load()
	cov.MemoryOff = !s.memOn.Load()
	cov.ReadPath = readPathText(s.opt.ReadPath, s.f.script, s.refused)
	cov.Duration = time.Since(cov.Started)
	switch {
	case s.firstErr != nil:
		cov.Err, cov.Complete = s.firstErr, false
	case s.ctx.Err() != nil && !cov.Complete:
		cov.Err = s.ctx.Err()
	case startID != "":
		// A SCAN cursor means nothing to another process: a restart or
		// failover mid-scan can miss keys, so say so.
		if end := topology.RunID(s.ctx, s.n.Client); end != "" && end != startID {
			cov.Err = fmt.Errorf("%s restarted or failed over during the scan: keys may be missing; rescan", s.n.Addr)
		}
	}
	if s.n.Role == "replica" {
		cov.Lag = topology.ReplicaLag(s.ctx, s.n.Client)
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
		cov.Share = s.prog.get(s.task) // how far it got before it stopped
	}
	return *cov
}

// KeySource is a source of records other than the server: a snapshot
// file (inspect/snapshot). It reads kss's records into out as batches,
// judged at its own time, and returns one coverage per keyspace; ScanAll
// closes out. String names it for a report (the file, what wrote it, its
// time).
type KeySource interface {
	fmt.Stringer
	ScanKeyspaces(ctx context.Context, kss []*Keyspace, opt Options, out chan<- Batch) []Coverage
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
		return opt.Snapshot.ScanKeyspaces(ctx, kss, opt, out)
	}
	nodes, topo, err := topology.Discover(ctx, c, opt.Replicas)
	if err != nil {
		covs := make([]Coverage, len(kss))
		for i, ks := range kss {
			covs[i] = Coverage{Keyspace: ks.Name, Match: ks.Match, Started: time.Now(), Err: err}
		}
		return covs
	}
	defer func() {
		for _, n := range nodes {
			if n.Owned {
				n.Client.Close()
			}
		}
	}()
	var covs []Coverage
	prog := newProgress(len(kss) * len(nodes))
	for ki, ks := range kss {
		seen := dedup.New()
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
					kc[i] = Coverage{Keyspace: ks.Name, Match: ks.Match, Node: n.Addr, Role: n.Role, Slots: n.Slots, Err: ctx.Err()}
					return
				}
				defer func() { <-sem }()
				kc[i] = scanNode(ctx, n, ks, opt, out, seen, prog, ki*len(nodes)+i)
			}()
		}
		wg.Wait()
		seen.Free() // the keyspaces are scanned in turn: one table at a time
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
func markMoved(ctx context.Context, c redis.UniversalClient, before topology.SlotMap, covs []Coverage) {
	cc, ok := c.(*redis.ClusterClient)
	if !ok || ctx.Err() != nil {
		return
	}
	slots, err := cc.ClusterSlots(ctx).Result()
	if err != nil {
		return
	}
	moved, involved := before.Moved(topology.SlotMapOf(slots))
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

// rateLimiter spaces SCAN calls so the key rate stays under --keys-per-sec:
// a token bucket (golang.org/x/time/rate) of one batch (--count keys).
// It starts empty, so the keys read by time t are at most perSec·t and
// one batch, as when each batch waited for the start plus keys/perSec;
// after a stall (a slow server, a long pause) it lets at most one batch
// catch up, where that schedule let every key behind it through at once.
type rateLimiter struct {
	lim *rate.Limiter // nil: unthrottled
}

func newRateLimiter(perSec, batch int) *rateLimiter {
	if perSec <= 0 {
		return &rateLimiter{}
	}
	lim := rate.NewLimiter(rate.Limit(perSec), max(batch, 1))
	lim.AllowN(time.Now(), lim.Burst()) // empty: the first batch's keys count too
	return &rateLimiter{lim: lim}
}

// wait holds the next SCAN call until the n keys just read are within the
// rate, and at least pause; false when ctx ends first.
func (l *rateLimiter) wait(ctx context.Context, n int, pause time.Duration) bool {
	d := pause
	if l.lim != nil {
		now := time.Now()
		for n > 0 { // a SCAN may return more than --count keys: a bucket at a time
			k := min(n, l.lim.Burst())
			d, n = max(d, l.lim.ReserveN(now, k).DelayFrom(now)), n-k
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
