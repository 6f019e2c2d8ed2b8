package inspect

import (
	"math/bits"
	"slices"
	"time"

	"github.com/idemctl/idemctl/inspect/histogram"
	"github.com/idemctl/idemctl/inspect/topk"
)

// Stats aggregates records as they stream, in memory bounded by the number
// of keyspaces and captures, not by the number of records.
type Stats struct {
	topN      int
	total     int64
	byState   [numStates]int64
	memByS    [numStates]int64
	memTotal  int64
	memKnown  int64
	flags     [numFlags]int64
	ttl       [numTTLBuckets + 2]int64 // buckets, then no TTL, then unknown
	age       *histogram.Histogram
	ageUnk    int64
	keyspaces map[string]*ksStats
	ksOrder   []string
	groups    map[string]*topk.Counter
	grpOrder  []string
	byPtr     map[*Keyspace]*ksCache
	lastKs    *ksCache // the keyspace of the last record: most batches hold one
	coverage  []Coverage
	covered   float64 // the largest Batch.Done seen
	memSq     float64 // Σ memory², for the interval of a sampled total
	nowMs     int64   // the clock of the batch being folded (server or snapshot)
	tl        timeline
}

type ksStats struct {
	match   string
	total   int64
	byState [numStates]int64
	stale   int64
	noTTL   int64
	memory  int64
	ev      ageEvidence
}

const numTTLBuckets = 8

// ttlBuckets are the upper bounds of the TTL histogram.
var ttlBuckets = [numTTLBuckets]struct {
	label string
	ms    int64
}{
	{"1m", 60_000}, {"5m", 300_000}, {"15m", 900_000}, {"1h", 3_600_000},
	{"6h", 21_600_000}, {"24h", 86_400_000}, {"7d", 604_800_000}, {"inf", 1<<62 - 1},
}

// NewStats returns an empty aggregate reporting the top n values per capture.
func NewStats(topN int) *Stats {
	if topN <= 0 {
		topN = 10
	}
	return &Stats{topN: topN, age: histogram.New(), keyspaces: map[string]*ksStats{},
		byPtr: map[*Keyspace]*ksCache{}, groups: map[string]*topk.Counter{}}
}

// Add folds a batch into the aggregate.
func (s *Stats) Add(b Batch) {
	s.covered = max(s.covered, b.Done)
	s.nowMs = b.ServerTimeMs
	for i := range b.Records {
		s.AddRecord(&b.Records[i])
	}
}

// AddRecord folds one record into the aggregate.
func (s *Stats) AddRecord(r *Record) {
	s.total++
	s.byState[r.State]++
	if r.MemoryBytes >= 0 {
		s.memTotal += r.MemoryBytes
		s.memSq += float64(r.MemoryBytes) * float64(r.MemoryBytes)
		s.memKnown++
		s.memByS[r.State] += r.MemoryBytes
	}
	// flagInfos[i].Flag is 1<<i: visit the set bits only.
	for f := r.Flags & (1<<numFlags - 1); f != 0; f &= f - 1 {
		s.flags[bits.TrailingZeros32(uint32(f))]++
	}
	switch {
	case r.TTLms == -1:
		s.ttl[len(ttlBuckets)]++
	case r.TTLms < 0:
		s.ttl[len(ttlBuckets)+1]++
	default:
		for i, b := range ttlBuckets {
			if r.TTLms <= b.ms {
				s.ttl[i]++
				break
			}
		}
	}
	if r.State == StateProcessing {
		if r.AgeMs >= 0 {
			s.age.Add(r.AgeMs)
		} else {
			s.ageUnk++
		}
	}
	if r.Keyspace != nil {
		s.addKeyspace(r)
	}
	if r.Flags&FlagStale != 0 {
		s.addStale(r)
	}
}

// addStale folds a stale record into the incident timeline, at the clock
// of its batch (AddRecord alone, with no batch, places none by minute).
func (s *Stats) addStale(r *Record) {
	capture, value := "", ""
	if c := s.lastKs; r.Keyspace != nil && r.Groups != nil && c != nil && c.ks == r.Keyspace {
		if c.tlIdx == tlIdxUnset {
			names := r.Keyspace.Template.Names()
			c.tlIdx = slices.Index(names, TimelineCapture(names))
		}
		if c.tlIdx >= 0 && c.tlIdx < len(r.Groups) {
			capture, value = r.Keyspace.Template.Names()[c.tlIdx], r.Groups[c.tlIdx]
		}
	}
	s.tl.add(s.nowMs, r.AgeMs, capture, value)
}

// ksCache is what a record of one *Keyspace folds into, found by pointer
// (the last one first) rather than by a lookup by name per record.
type ksCache struct {
	ks   *Keyspace
	st   *ksStats
	tops []*topk.Counter // beside Template.Names(); nil until a record has groups
	// tlIdx is the capture the incident timeline names, in
	// Template.Names(); -1 none, tlIdxUnset until a stale record asks.
	tlIdx int
}

const tlIdxUnset = -2

func (s *Stats) addKeyspace(r *Record) {
	c := s.lastKs
	if c == nil || c.ks != r.Keyspace {
		c = s.cacheOf(r.Keyspace)
	}
	ks := c.st
	ks.total++
	ks.byState[r.State]++
	if r.Stale() {
		ks.stale++
	}
	if r.Flags&FlagNoTTL != 0 {
		ks.noTTL++
	}
	ks.memory += max(r.MemoryBytes, 0)
	ks.ev.add(r)
	if r.Groups == nil {
		return
	}
	if c.tops == nil {
		c.tops = s.topsOf(r.Keyspace.Template.Names())
	}
	for i, t := range c.tops {
		t.Add(r.Groups[i], r.MemoryBytes)
	}
}

// cacheOf finds or makes k's aggregate; keyspaces are told apart by name.
func (s *Stats) cacheOf(k *Keyspace) *ksCache {
	c := s.byPtr[k]
	if c == nil {
		ks := s.keyspaces[k.Name]
		if ks == nil {
			ks = &ksStats{match: k.Match, ev: ageEvidence{reserveTTL: k.ReserveTTL,
				timeout: k.ProcessingTimeout, retention: k.Retention}}
			if k.Schema != nil {
				ks.ev.schema = k.Schema.Name
			}
			s.keyspaces[k.Name] = ks
			s.ksOrder = append(s.ksOrder, k.Name)
		}
		c = &ksCache{ks: k, st: ks, tlIdx: tlIdxUnset}
		s.byPtr[k] = c
	}
	s.lastKs = c
	return c
}

// topsOf is the top-K of each capture named, shared by name across keyspaces.
func (s *Stats) topsOf(names []string) []*topk.Counter {
	tops := make([]*topk.Counter, 0, len(names))
	for _, name := range names {
		t := s.groups[name]
		if t == nil {
			t = topk.New(max(1000, 20*s.topN))
			s.groups[name] = t
			s.grpOrder = append(s.grpOrder, name)
		}
		tops = append(tops, t)
	}
	return tops
}

// AddCoverage records how much of a keyspace the scan saw.
func (s *Stats) AddCoverage(c ...Coverage) { s.coverage = append(s.coverage, c...) }

// Total is the number of records aggregated so far.
func (s *Stats) Total() int64 { return s.total }

// Report is the cardinality audit, shaped for JSON output.
type Report struct {
	Total         int64                  `json:"total"`
	ByState       map[string]int64       `json:"by_state"`
	Stale         int64                  `json:"stale"`
	Flags         map[string]int64       `json:"flags"`
	MemoryBytes   MemoryReport           `json:"memory_bytes"`
	TTLHistogram  []TTLBucket            `json:"ttl_histogram"`
	ProcessingAge AgeReport              `json:"processing_age_ms"`
	Groups        map[string]GroupReport `json:"groups"`
	GroupOrder    []string               `json:"-"`
	Keyspaces     []KeyspaceReport       `json:"keyspaces"`
	Coverage      []CoverageReport       `json:"coverage"`
	Source        *Source                `json:"source,omitempty"`
	Complete      bool                   `json:"complete"`
	// Covered is the share of the keyspace the scan visited: 1 when it
	// is complete, less when it was cut short (Ctrl-C, a lost node).
	Covered float64 `json:"covered"`
	// Sample is set when the scan read a sample (Options.Sample): every
	// count above is then an estimate for the whole keyspace, and this
	// holds the share read and each count's 95 % interval.
	Sample      *SampleReport `json:"sample,omitempty"`
	CannotJudge []Gap         `json:"cannot_judge"` // why verdicts on these records cannot be backed (see Gaps)
	// IncidentTimeline is the stale records by the minute they were
	// reserved, with the endpoints that hold the most (timeline.go).
	IncidentTimeline IncidentTimeline `json:"incident_timeline"`
}

// MemoryReport is memory in total and by state.
type MemoryReport struct {
	Total        int64            `json:"total"`
	KnownRecords int64            `json:"known_records"` // records whose MEMORY USAGE was read
	ByState      map[string]int64 `json:"by_state"`
}

// TTLBucket counts records whose remaining TTL is at most LeMs.
type TTLBucket struct {
	Le    string `json:"le"` // 1m … 7d, inf, none (no TTL), unknown
	LeMs  int64  `json:"le_ms,omitempty"`
	Count int64  `json:"count"`
}

// Label names the bucket for people: ≤1m … ≤7d, >7d, no TTL, unknown.
func (b TTLBucket) Label() string {
	switch b.Le {
	case "inf":
		return ">" + ttlBuckets[len(ttlBuckets)-2].label
	case "none":
		return "no TTL"
	case "unknown":
		return "unknown"
	}
	return "≤" + b.Le
}

// AgeReport is the age distribution of processing records.
type AgeReport struct {
	Count   int64 `json:"count"`
	Unknown int64 `json:"unknown"` // processing records whose age cannot be derived
	P50     int64 `json:"p50"`
	P90     int64 `json:"p90"`
	P99     int64 `json:"p99"`
	Max     int64 `json:"max"`
}

// GroupReport is the top values of one template capture.
type GroupReport struct {
	Distinct      int64        `json:"distinct"`
	DistinctExact bool         `json:"distinct_exact"`
	Top           []GroupCount `json:"top"`
}

// KeyspaceReport is the per-keyspace breakdown.
type KeyspaceReport struct {
	Name        string           `json:"name"`
	Match       Text             `json:"match"`
	Total       int64            `json:"total"`
	ByState     map[string]int64 `json:"by_state"`
	Stale       int64            `json:"stale"`
	NoTTL       int64            `json:"no_ttl"`
	MemoryBytes int64            `json:"memory_bytes"`
	AgeUnknown  map[string]int64 `json:"age_unknown"` // processing records whose staleness cannot be judged, by cause
	Undecoded   int64            `json:"undecoded"`   // records that do not decode with the schema
	ev          *ageEvidence
}

// CoverageReport is Coverage shaped for JSON.
type CoverageReport struct {
	Keyspace   string  `json:"keyspace"`
	Match      Text    `json:"match"`
	Node       string  `json:"node,omitempty"`
	Role       string  `json:"role,omitempty"`
	Slots      string  `json:"slots,omitempty"`
	Lag        string  `json:"replica_lag,omitempty"`
	Keys       int64   `json:"keys"`
	Records    int64   `json:"records"`
	Vanished   int64   `json:"vanished"`
	Expired    int64   `json:"expired_at_snapshot,omitempty"`
	Duplicates int64   `json:"duplicates"`
	DurationMs int64   `json:"duration_ms"`
	KeysPerSec float64 `json:"keys_per_sec"`
	Complete   bool    `json:"complete"`
	Limited    bool    `json:"limited,omitempty"`
	Sampled    bool    `json:"sampled,omitempty"`
	Share      float64 `json:"share"` // of the keyspace visited
	MemoryOff  bool    `json:"memory_unavailable,omitempty"`
	ReadPath   string  `json:"read_path,omitempty"`
	Error      string  `json:"error,omitempty"`
}

func stateMap(v *[numStates]int64) map[string]int64 {
	m := make(map[string]int64, numStates)
	for i := range v {
		m[State(i).String()] = v[i]
	}
	return m
}

// Report snapshots the aggregate.
func (s *Stats) Report() Report {
	r := Report{
		Total:   s.total,
		ByState: stateMap(&s.byState),
		Stale:   s.flags[0],
		Flags:   map[string]int64{},
		MemoryBytes: MemoryReport{
			Total: s.memTotal, KnownRecords: s.memKnown, ByState: stateMap(&s.memByS),
		},
		Groups:     map[string]GroupReport{},
		GroupOrder: s.grpOrder,
		Complete:   true,
	}
	for i, fi := range flagInfos {
		r.Flags[fi.Name] = s.flags[i]
	}
	for i, b := range ttlBuckets {
		ms := b.ms
		if b.label == "inf" {
			ms = 0
		}
		r.TTLHistogram = append(r.TTLHistogram, TTLBucket{Le: b.label, LeMs: ms, Count: s.ttl[i]})
	}
	r.TTLHistogram = append(r.TTLHistogram,
		TTLBucket{Le: "none", Count: s.ttl[len(ttlBuckets)]},
		TTLBucket{Le: "unknown", Count: s.ttl[len(ttlBuckets)+1]})
	r.ProcessingAge = AgeReport{Count: s.age.Count(), Unknown: s.ageUnk}
	if s.age.Count() > 0 {
		r.ProcessingAge.P50 = s.age.Quantile(0.50)
		r.ProcessingAge.P90 = s.age.Quantile(0.90)
		r.ProcessingAge.P99 = s.age.Quantile(0.99)
		r.ProcessingAge.Max = s.age.Max()
	}
	for _, name := range s.grpOrder {
		t := s.groups[name]
		d, exact := t.Distinct()
		r.Groups[name] = GroupReport{Distinct: d, DistinctExact: exact, Top: groupCounts(t.Top(s.topN))}
	}
	for _, name := range s.ksOrder {
		k := s.keyspaces[name]
		ev := k.ev // a copy: the report does not move with later records
		r.Keyspaces = append(r.Keyspaces, KeyspaceReport{
			Name: name, Match: Text(k.match), Total: k.total, ByState: stateMap(&k.byState),
			Stale: k.stale, NoTTL: k.noTTL, MemoryBytes: k.memory,
			AgeUnknown: k.ev.byCause(), Undecoded: k.ev.undecoded, ev: &ev,
		})
	}
	r.addCoverage(s.coverage)
	r.Covered = s.covered
	if r.Complete {
		r.Covered = 1
	}
	if p, read, ok := sampleShare(s.coverage); ok {
		r.Covered = p
		r.estimate(p, read, s.memSq)
	}
	r.CannotJudge = r.Gaps(-1)
	r.IncidentTimeline = s.tl.report()
	return r
}

// addCoverage shapes the scans' coverage for the report; one incomplete
// scan makes the report incomplete.
func (r *Report) addCoverage(covs []Coverage) {
	for _, c := range covs {
		cr := CoverageReport{
			Keyspace: c.Keyspace, Match: Text(c.Match), Node: c.Node, Role: c.Role, Slots: c.Slots, Lag: c.Lag,
			Keys: c.Keys, Records: c.Records,
			Vanished: c.Vanished, Expired: c.Expired, Duplicates: c.Duplicates, DurationMs: c.Duration.Milliseconds(),
			KeysPerSec: float64(int64(c.KeysPerSec()*10)) / 10, Complete: c.Complete,
			Limited: c.Limited, Sampled: c.Sampled, Share: c.Share, MemoryOff: c.MemoryOff, ReadPath: c.ReadPath,
		}
		if c.Err != nil {
			cr.Error = c.Err.Error()
		}
		if !c.Complete {
			r.Complete = false
		}
		r.Coverage = append(r.Coverage, cr)
	}
}

// Elapsed sums the scan durations.
func (r Report) Elapsed() time.Duration {
	var d time.Duration
	for _, c := range r.Coverage {
		d += time.Duration(c.DurationMs) * time.Millisecond
	}
	return d
}

// GroupCount is one value of a capture with its count and memory.
type GroupCount struct {
	Value       Text  `json:"value"`
	Count       int64 `json:"count"`
	MaxError    int64 `json:"max_error,omitempty"` // count may be over by at most this
	MemoryBytes int64 `json:"memory_bytes"`
}

// groupCounts are a counter's top values as a report gives them.
func groupCounts(es []topk.Entry) []GroupCount {
	out := make([]GroupCount, len(es))
	for i, e := range es {
		out[i] = GroupCount{Value: Text(e.Value), Count: e.Count, MaxError: e.MaxError, MemoryBytes: e.Memory}
	}
	return out
}
