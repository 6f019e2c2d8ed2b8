package inspect

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func TestTopKExactThenBounded(t *testing.T) {
	tk := newTopK(50)
	for i := range 40 {
		for range i + 1 {
			tk.add(fmt.Sprintf("v%d", i), 10)
		}
	}
	top := tk.top(3)
	if top[0].Value != "v39" || top[0].Count != 40 || top[0].MaxError != 0 || top[0].MemoryBytes != 400 {
		t.Fatalf("exact top: %+v", top)
	}
	if d, exact := tk.distinct(); d != 40 || !exact {
		t.Fatalf("distinct %d exact %v", d, exact)
	}
	// Past capacity: the heavy hitter survives with a count that is an upper bound.
	tk = newTopK(20)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 50_000 {
		if i%10 == 0 {
			tk.add("hot", 1)
		} else {
			tk.add(fmt.Sprintf("cold-%d", rng.IntN(10_000)), 1)
		}
	}
	top = tk.top(1)
	if top[0].Value != "hot" || top[0].Count < 5000 || top[0].Count-top[0].MaxError > 5000 {
		t.Fatalf("heavy hitter: %+v", top[0])
	}
	d, exact := tk.distinct()
	if exact || d < 9000 || d > 11000 {
		t.Fatalf("HLL distinct %d (exact %v), want ≈10001", d, exact)
	}
}

func TestStatsReport(t *testing.T) {
	ks := mustKeyspace(t, "atlasmart", nil)
	s := NewStats(5)
	recs := []Record{
		{Keyspace: ks, State: StateProcessing, AgeMs: 40_000, Flags: FlagStale, TTLms: 20_000, MemoryBytes: 100, Groups: []string{"a", "POST:/x", "1"}},
		{Keyspace: ks, State: StateProcessing, AgeMs: -1, Flags: FlagNoTTL | FlagProcessingNoTTL, TTLms: -1, MemoryBytes: 100, Groups: []string{"a", "POST:/x", "2"}},
		{Keyspace: ks, State: StateSucceeded, AgeMs: -1, TTLms: 200_000, MemoryBytes: -1, Groups: []string{"b", "POST:/y", "3"}},
	}
	s.Add(Batch{Keyspace: ks, Records: recs})
	r := s.Report()
	if r.Total != 3 || r.ByState["processing"] != 2 || r.Stale != 1 || r.Flags["processing_no_ttl"] != 1 {
		t.Fatalf("report %+v", r)
	}
	if r.MemoryBytes.Total != 200 || r.MemoryBytes.KnownRecords != 2 || r.MemoryBytes.ByState["processing"] != 200 {
		t.Fatalf("memory %+v", r.MemoryBytes)
	}
	if r.ProcessingAge.Count != 1 || r.ProcessingAge.Unknown != 1 || r.ProcessingAge.Max != 40_000 {
		t.Fatalf("age %+v", r.ProcessingAge)
	}
	if g := r.Groups["principal"]; g.Distinct != 2 || g.Top[0].Value != "a" || g.Top[0].Count != 2 {
		t.Fatalf("groups %+v", g)
	}
	var none, le1m, le5m int64
	for _, b := range r.TTLHistogram {
		switch b.Le {
		case "none":
			none = b.Count
		case "1m":
			le1m = b.Count
		case "5m":
			le5m = b.Count
		}
	}
	if none != 1 || le1m != 1 || le5m != 1 {
		t.Fatalf("ttl histogram %+v", r.TTLHistogram)
	}
}

// TestTopKGuarantees checks Space-Saving's bounds against exact counts over
// a skewed stream with churn: every reported count is an upper bound within
// its stated error, any value counted more than the smallest slot is
// reported, and the heap stays a heap.
func TestTopKGuarantees(t *testing.T) {
	tk := newTopK(64)
	exact := map[string]int64{}
	rng := rand.New(rand.NewPCG(7, 9))
	for range 200_000 {
		v := fmt.Sprintf("v%d", int(rng.ExpFloat64()*40)) // skewed
		if rng.IntN(3) == 0 {
			v = fmt.Sprintf("u%d", rng.IntN(1<<30)) // unique churn
		}
		exact[v]++
		tk.add(v, 1)
	}
	for i := 1; i < len(tk.h); i++ {
		if tk.h[(i-1)/2].count > tk.h[i].count || tk.h[i].e.idx != i {
			t.Fatalf("heap broken at %d", i)
		}
	}
	held := 0 // the table holds every entry, each findable after the churn
	for _, sl := range tk.tab {
		if sl.e != nil {
			held++
		}
	}
	for _, nd := range tk.h {
		if e := nd.e; tk.find(e.value, e.hash) != e {
			t.Fatalf("%s not found in the table", e.value)
		}
	}
	if held != len(tk.h) {
		t.Fatalf("table holds %d entries, heap %d", held, len(tk.h))
	}
	minCount := tk.h[0].count
	reported := map[string]bool{}
	for _, g := range tk.top(len(tk.h)) {
		v := string(g.Value)
		reported[v] = true
		if c := exact[v]; g.Count < c || g.Count-g.MaxError > c {
			t.Errorf("%s: reported %d (error ≤ %d), exact %d", v, g.Count, g.MaxError, c)
		}
	}
	for v, c := range exact {
		if c > minCount && !reported[v] {
			t.Errorf("%s counted %d > the smallest slot's %d but not reported", v, c, minCount)
		}
	}
}

// BenchmarkStatsAddRecord aggregates records of the lesson's key shape, whose
// last capture (the idempotency key) is unique per record.
func BenchmarkStatsAddRecord(b *testing.B) {
	ks := mustKeyspace(b, "atlasmart", nil)
	recs := make([]Record, 4096)
	for i := range recs {
		key := fmt.Sprintf("atlasmart:ch23:idem:customer-%d:POST:/orders:req-%08d", i%977, i)
		g, _ := ks.Template.Match(key)
		recs[i] = Record{Key: key, Keyspace: ks, Groups: g, State: StateSucceeded, TTLms: 60_000, MemoryBytes: 300}
	}
	s := NewStats(10)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s.AddRecord(&recs[i%len(recs)])
	}
}
