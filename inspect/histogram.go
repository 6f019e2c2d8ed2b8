package inspect

import "math/bits"

// histogram is a log-linear histogram of non-negative int64 values with
// about 3% relative precision in fixed memory (~16 KB), so percentiles of a
// million ages need no sorting and no per-record storage.
type histogram struct {
	counts        []int64
	n             int64
	min, max, sum int64
}

const histSub = 32 // sub-buckets per power of two

// histBuckets covers every non-negative int64 (exponent up to 57).
const histBuckets = 57*histSub + 2*histSub

func newHistogram() *histogram { return &histogram{counts: make([]int64, histBuckets), min: -1} }

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

func (h *histogram) add(v int64) {
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

// quantile returns an estimate of the q-quantile (0..1), within the bucket
// width, clamped to the observed min and max.
func (h *histogram) quantile(q float64) int64 {
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
