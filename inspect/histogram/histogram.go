// Package histogram keeps a log-linear histogram of non-negative values
// in fixed memory, for percentiles of a million ages without sorting.
//
// Floor 0 of ARCHITECTURE.md, a foundation: it imports nothing of
// idemctl's.
package histogram

import "math/bits"

// Histogram is a log-linear histogram of non-negative int64 values with
// about 3% relative precision in fixed memory (~16 KB), so percentiles of a
// million ages need no sorting and no per-record storage.
type Histogram struct {
	counts        []int64
	n             int64
	min, max, sum int64
}

const histSub = 32 // sub-buckets per power of two

// histBuckets covers every non-negative int64 (exponent up to 57).
const histBuckets = 57*histSub + 2*histSub

// New is an empty histogram.
func New() *Histogram { return &Histogram{counts: make([]int64, histBuckets), min: -1} }

func histIndex(v int64) int {
	if v < 2*histSub {
		return int(v)
	}
	exp := bits.Len64(uint64(v)) - 6 // keep 6 significant bits
	return exp*histSub + int(v>>uint(exp))
}

// histLower is the smallest value in bucket i.
func histLower(i int) int64 {
	if i < 2*histSub {
		return int64(i)
	}
	exp := i/histSub - 1
	mant := int64(i - exp*histSub)
	return mant << uint(exp)
}

// Add counts v (a negative v as 0).
func (h *Histogram) Add(v int64) {
	if v < 0 {
		v = 0
	}
	h.counts[histIndex(v)]++
	h.n++
	h.sum += v
	if h.min < 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
}

// Quantile returns an estimate of the q-quantile (0..1), within the bucket
// width, clamped to the observed min and max.
func (h *Histogram) Quantile(q float64) int64 {
	if h.n == 0 {
		return 0
	}
	if q >= 1 {
		return h.max
	}
	rank := int64(q*float64(h.n) + 0.5)
	if rank < 1 {
		rank = 1
	}
	var cum int64
	for i, c := range h.counts {
		cum += c
		if cum >= rank {
			lo, hi := histLower(i), h.max
			if i+1 < histBuckets {
				hi = histLower(i+1) - 1
			}
			v := lo + (hi-lo)/2
			return min(max(v, h.min), h.max)
		}
	}
	return h.max
}

// Count is how many values were added.
func (h *Histogram) Count() int64 { return h.n }

// Max is the largest value added.
func (h *Histogram) Max() int64 { return h.max }
