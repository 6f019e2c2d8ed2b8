package topk

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func TestTopKExactThenBounded(t *testing.T) {
	tk := New(50)
	for i := range 40 {
		for range i + 1 {
			tk.Add(fmt.Sprintf("v%d", i), 10)
		}
	}
	top := tk.Top(3)
	if top[0].Value != "v39" || top[0].Count != 40 || top[0].MaxError != 0 || top[0].Memory != 400 {
		t.Fatalf("exact top: %+v", top)
	}
	if d, exact := tk.Distinct(); d != 40 || !exact {
		t.Fatalf("distinct %d exact %v", d, exact)
	}
	// Past capacity: the heavy hitter survives with a count that is an upper bound.
	tk = New(20)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 50_000 {
		if i%10 == 0 {
			tk.Add("hot", 1)
		} else {
			tk.Add(fmt.Sprintf("cold-%d", rng.IntN(10_000)), 1)
		}
	}
	top = tk.Top(1)
	if top[0].Value != "hot" || top[0].Count < 5000 || top[0].Count-top[0].MaxError > 5000 {
		t.Fatalf("heavy hitter: %+v", top[0])
	}
	d, exact := tk.Distinct()
	if exact || d < 9000 || d > 11000 {
		t.Fatalf("HLL distinct %d (exact %v), want ≈10001", d, exact)
	}
}

// TestTopKGuarantees checks Space-Saving's bounds against exact counts over
// a skewed stream with churn: every reported count is an upper bound within
// its stated error, any value counted more than the smallest slot is
// reported, and the heap stays a heap.
func TestTopKGuarantees(t *testing.T) {
	tk := New(64)
	exact := map[string]int64{}
	rng := rand.New(rand.NewPCG(7, 9))
	for range 200_000 {
		v := fmt.Sprintf("v%d", int(rng.ExpFloat64()*40)) // skewed
		if rng.IntN(3) == 0 {
			v = fmt.Sprintf("u%d", rng.IntN(1<<30)) // unique churn
		}
		exact[v]++
		tk.Add(v, 1)
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
	for _, g := range tk.Top(len(tk.h)) {
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
