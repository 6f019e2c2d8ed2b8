package inspect

import "math"

// Estimates from a sample. A sampled scan reads the keys of a run of hash
// buckets from a random start, and keys land in buckets by hash: each key
// was read with the same probability p, the share visited, independently
// of what it holds. A count n of the sample then estimates n/p, and n is
// close to Poisson-distributed — exactly Binomial(N, p), whose spread is
// smaller by √(1−p) — so its 95 % interval is the Poisson one, narrowed by
// that factor, over p. A total of values (memory) uses the normal interval
// of a Horvitz–Thompson sum.

// SampleReport is what a sampled report read and how sure each count is.
type SampleReport struct {
	Share       float64 `json:"share"`        // the share of the keyspace read
	RecordsRead int64   `json:"records_read"` // the records the estimates rest on
	// Intervals95 holds each count's 95 % interval, by the count's path in
	// the report: total, stale, by_state.processing, flags.no_ttl,
	// memory_bytes.total, ttl_histogram.1h, groups.principal.customer-7.
	Intervals95 map[string]Interval `json:"intervals_95"`
}

// Interval is a 95 % interval for an estimated count.
type Interval struct {
	Low  int64 `json:"low"`
	High int64 `json:"high"`
}

// Contains reports whether the true value v lies inside.
func (i Interval) Contains(v int64) bool { return i.Low <= v && v <= i.High }

// sampleShare is the share a sampled scan read over all its keyspaces and
// nodes: the keys read over the keys they stand for (Σ keys/share), so
// that nodes read to different depths weigh by what they hold.
func sampleShare(covs []Coverage) (share float64, read int64, ok bool) {
	var stand float64
	for _, c := range covs {
		if !c.Sampled {
			if c.Complete {
				read += c.Keys
				stand += float64(c.Keys)
			}
			continue
		}
		ok = true
		read += c.Keys
		if c.Share > 0 {
			stand += float64(c.Keys) / c.Share
		}
	}
	switch {
	case !ok:
		return 0, 0, false
	case stand == 0: // sampled, and nothing there
		return 1, 0, true
	}
	return float64(read) / stand, read, true
}

// estimate turns the sample's counts into estimates for the keyspace, with
// their intervals. memSq is Σ memory² over the sample.
func (r *Report) estimate(p float64, keysRead int64, memSq float64) {
	e := estimator{p: p, sr: &SampleReport{Share: p, RecordsRead: r.Total, Intervals95: map[string]Interval{}}}
	e.count("total", &r.Total)
	e.count("stale", &r.Stale)
	e.countMap("by_state.", r.ByState)
	e.countMap("flags.", r.Flags)
	e.scaleMap(r.MemoryBytes.ByState) // totals of bytes: their interval is the total's
	e.memory(&r.MemoryBytes, memSq)
	for i := range r.TTLHistogram {
		e.count("ttl_histogram."+r.TTLHistogram[i].Le, &r.TTLHistogram[i].Count)
	}
	e.count("processing_age_ms.count", &r.ProcessingAge.Count)
	e.count("processing_age_ms.unknown", &r.ProcessingAge.Unknown)
	for name, g := range r.Groups {
		for i := range g.Top {
			e.count("groups."+name+"."+string(g.Top[i].Value), &g.Top[i].Count)
			g.Top[i].MemoryBytes = e.scale(g.Top[i].MemoryBytes)
		}
		g.DistinctExact = false // values seen in a sample: at least this many
		r.Groups[name] = g
	}
	for i := range r.Keyspaces {
		e.keyspace(&r.Keyspaces[i])
	}
	r.Sample = e.sr
}

// estimator scales a sample's counts, each read with probability p, to
// the keyspace, noting each count's interval in sr.
type estimator struct {
	p  float64
	sr *SampleReport
}

// scale is n over p, the estimate of a total.
func (e *estimator) scale(n int64) int64 { return int64(math.Round(float64(n) / e.p)) }

// count scales the count at *n, noting its interval under path.
func (e *estimator) count(path string, n *int64) {
	lo, hi := poissonInterval(*n, e.p)
	e.sr.Intervals95[path] = Interval{lo, hi}
	*n = e.scale(*n)
}

// countMap counts each of m's counts, under prefix and its key.
func (e *estimator) countMap(prefix string, m map[string]int64) {
	for k, n := range m {
		e.count(prefix+k, &n)
		m[k] = n
	}
}

// scaleMap scales each of m's totals, with no interval of its own.
func (e *estimator) scaleMap(m map[string]int64) {
	for k, n := range m {
		m[k] = e.scale(n)
	}
}

// memory scales the memory total, with the normal interval of a
// Horvitz–Thompson sum (memSq is Σ memory² over the sample), and the
// count of records whose memory is known.
func (e *estimator) memory(m *MemoryReport, memSq float64) {
	if m.KnownRecords > 0 {
		p := e.p
		total := float64(m.Total) / p
		half := 1.96 * math.Sqrt((1-p)*memSq) / p
		e.sr.Intervals95["memory_bytes.total"] = Interval{int64(math.Max(0, total-half)), int64(math.Ceil(total + half))}
		m.Total = int64(math.Round(total))
	}
	e.count("memory_bytes.known_records", &m.KnownRecords)
}

// keyspace scales one keyspace's counts, under keyspaces.<name>.
func (e *estimator) keyspace(k *KeyspaceReport) {
	pre := "keyspaces." + k.Name + "."
	e.count(pre+"total", &k.Total)
	e.count(pre+"stale", &k.Stale)
	e.count(pre+"no_ttl", &k.NoTTL)
	e.countMap(pre+"by_state.", k.ByState)
	k.MemoryBytes = e.scale(k.MemoryBytes)
	e.countMap(pre+"age_unknown.", k.AgeUnknown)
	e.count(pre+"undecoded", &k.Undecoded)
	if k.ev != nil { // what cannot be judged, in the same scale (a copy: Stats keeps the sample's)
		ev := *k.ev
		for g := range ev.gaps {
			ev.gaps[g] = e.scale(ev.gaps[g])
		}
		ev.undecoded = e.scale(ev.undecoded)
		k.ev = &ev
	}
}

// poissonInterval is the 95 % interval of N from n ~ Binomial(N, p): the
// exact Poisson interval of n (Garwood, by the Wilson–Hilferty cube root of
// χ²), its half-widths narrowed by √(1−p), over p, widened to whole counts.
func poissonInterval(n int64, p float64) (lo, hi int64) {
	if p >= 1 {
		return n, n
	}
	x := float64(n)
	l, h := 0.0, chi2Quantile(0.975, 2*x+2)/2
	if n > 0 {
		l = chi2Quantile(0.025, 2*x) / 2
	}
	f := math.Sqrt(1 - p)
	l, h = x-(x-l)*f, x+(h-x)*f
	return int64(math.Floor(l / p)), int64(math.Ceil(h / p))
}

// chi2Quantile is the q-quantile of χ² with k degrees of freedom
// (Wilson–Hilferty: within a percent for k ≥ 2, which is all we ask of it).
func chi2Quantile(q, k float64) float64 {
	z := 1.959963984540054
	if q < 0.5 {
		z = -z
	}
	a := 2 / (9 * k)
	v := 1 - a + z*math.Sqrt(a)
	return k * v * v * v
}
