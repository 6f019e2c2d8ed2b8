package histogram

import (
	"math/rand/v2"
	"sort"
	"testing"
)

func TestHistogramQuantiles(t *testing.T) {
	h := New()
	rng := rand.New(rand.NewPCG(1, 2))
	vals := make([]int64, 100_000)
	for i := range vals {
		vals[i] = rng.Int64N(10_000_000)
		h.Add(vals[i])
	}
	sort.Slice(vals, func(i, j int) bool { return vals[i] < vals[j] })
	for _, q := range []float64{0.5, 0.9, 0.99} {
		exact := vals[int(q*float64(len(vals)))-1]
		got := h.Quantile(q)
		if diff := float64(got-exact) / float64(exact); diff > 0.04 || diff < -0.04 {
			t.Errorf("p%v: got %d, exact %d (%.1f%% off)", q*100, got, exact, diff*100)
		}
	}
	h.Add(1<<63 - 1) // the largest value has a bucket
	if h.Quantile(1) != 1<<63-1 {
		t.Fatalf("max int64: %d", h.Quantile(1))
	}
	if h.max != 1<<63-1 || vals[0] < 0 || h.Quantile(1) != h.max {
		t.Errorf("max %d, want %d", h.max, vals[len(vals)-1])
	}
	for i := 0; i < histBuckets; i++ { // every bucket's lower bound maps back to it
		if histIndex(histLower(i)) != i {
			t.Fatalf("bucket %d: lower %d maps to %d", i, histLower(i), histIndex(histLower(i)))
		}
	}
}
