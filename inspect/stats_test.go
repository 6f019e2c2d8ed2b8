package inspect

import (
	"fmt"
	"testing"
)

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
