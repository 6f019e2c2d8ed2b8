package inspect

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

var updateStatsGolden = flag.Bool("update-stats-golden", false, "rewrite testdata/stats_golden.json")

// goldenRecords is a fixed stream of atlasmart-shaped records over two
// keyspaces: skewed principals past the top-K's capacity (evictions), a
// unique idempotency key per record, keys that miss the template.
func goldenRecords(t testing.TB) []Record {
	a := mustKeyspace(t, "atlasmart", func(sp *KeyspaceSpec) { sp.Name = "a" })
	b := mustKeyspace(t, "atlasmart", func(sp *KeyspaceSpec) { sp.Name = "b" })
	rng := rand.New(rand.NewPCG(11, 13))
	eps := []string{"POST:/orders", "PUT:/orders/x", "POST:/pay", "GET:/a:b:c", "DELETE:/o"}
	recs := make([]Record, 0, 120_000)
	for i := range cap(recs) {
		ks := a
		if i%7 == 0 {
			ks = b
		}
		key := fmt.Sprintf("atlasmart:ch23:idem:cust-%d:%s:req-%d", int(rng.ExpFloat64()*300), eps[rng.IntN(len(eps))], rng.IntN(1<<40))
		if i%97 == 0 {
			key = fmt.Sprintf("atlasmart:ch23:idem:odd-%d", i) // misses the template
		}
		r := Record{Key: key, Keyspace: ks, State: State(rng.IntN(int(numStates))), TTLms: rng.Int64N(700_000_000) - 3,
			MemoryBytes: rng.Int64N(5000) - 1, AgeMs: rng.Int64N(100_000_000) - 1, Flags: Flags(rng.Uint64()) & (1<<numFlags - 1)}
		if g, ok := ks.Template.Match(key); ok {
			r.Groups = g
		} else {
			r.Flags |= FlagTemplateMismatch
		}
		recs = append(recs, r)
	}
	return recs
}

// goldenJSON is the report as JSON with the HyperLogLog estimates blanked
// (its seed differs per process), plus a digest of every top-K slot, so
// that a change in which values the top-K keeps shows.
func goldenJSON(t testing.TB, s *Stats) []byte {
	r := s.Report()
	for name, g := range r.Groups {
		if !g.DistinctExact {
			g.Distinct = 0
			r.Groups[name] = g
		}
	}
	full := map[string]string{}
	for name, tk := range s.groups {
		b, _ := json.Marshal(groupCounts(tk.Top(tk.Len())))
		sum := sha256.Sum256(b)
		full[name] = hex.EncodeToString(sum[:])
	}
	out, err := json.MarshalIndent(struct {
		Report Report            `json:"report"`
		Slots  map[string]string `json:"slots_sha256"`
	}{r, full}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

// TestStatsGolden pins the aggregate of a fixed stream: the hot path's
// shortcuts (buffers reused, copies skipped) must not move any figure.
func TestStatsGolden(t *testing.T) {
	for i, fi := range flagInfos { // AddRecord counts a flag by its bit
		if fi.Flag != 1<<i {
			t.Fatalf("flag %s is not bit %d", fi.Name, i)
		}
	}
	recs := goldenRecords(t)
	s := NewStats(10)
	half := len(recs) / 2
	const now = 1_765_000_000_000 // the clock the incident timeline places ages by
	s.Add(Batch{Records: recs[:half], ServerTimeMs: now})
	s.Add(Batch{Records: recs[half:], ServerTimeMs: now})
	s.AddCoverage(Coverage{Keyspace: "a", Records: int64(len(recs)), Complete: true, Share: 1})
	got := goldenJSON(t, s)
	path := filepath.Join("testdata", "stats_golden.json")
	if *updateStatsGolden {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("stats of the fixed stream differ from %s (rerun with -update-stats-golden only if the change is meant)", path)
	}
	// A report taken mid-stream must not change as records keep coming.
	s2 := NewStats(10)
	s2.Add(Batch{Records: recs[:half], ServerTimeMs: now})
	r := s2.Report()
	before, _ := json.Marshal(r)
	s2.Add(Batch{Records: recs[half:], ServerTimeMs: now})
	s2.AddCoverage(Coverage{Keyspace: "a", Records: int64(len(recs)), Complete: true, Share: 1})
	if after, _ := json.Marshal(r); !bytes.Equal(before, after) {
		t.Error("a report changed after it was taken")
	}
	if again := goldenJSON(t, s2); !bytes.Equal(again, got) {
		t.Error("a report taken mid-stream changed the final aggregate")
	}
}
