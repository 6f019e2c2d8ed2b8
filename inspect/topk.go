package inspect

import (
	"hash/maphash"
	"math"
	"math/bits"
	"sort"
	"strings"
)

// topK counts the most frequent values of one template capture in bounded
// memory (the Space-Saving algorithm): exact while the distinct values fit
// in its capacity, otherwise each count is an upper bound with a known error.
// Distinct values are estimated with a HyperLogLog sketch.
type topK struct {
	cap     int
	entries map[string]*tkEntry
	h       tkHeap
	evicted bool
	hll     hll
}

type tkEntry struct {
	value  string
	count  int64
	err    int64 // overestimate bound inherited on eviction
	memory int64
	idx    int
}

// tkHeap is a min-heap on count. Counts only grow, so an entry only ever
// moves down; written out rather than through container/heap's interface
// calls because a keyspace-wide capture (the idempotency key itself) makes
// every record an eviction at the root.
type tkHeap []*tkEntry

func (h *tkHeap) push(e *tkEntry) {
	e.idx = len(*h)
	*h = append(*h, e)
	h.up(e.idx)
}

func (h tkHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if h[p].count <= h[i].count {
			return
		}
		h.swap(i, p)
		i = p
	}
}

// down restores the heap after h[i]'s count grew.
func (h tkHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h[r].count < h[l].count {
			m = r
		}
		if h[i].count <= h[m].count {
			return
		}
		h.swap(i, m)
		i = m
	}
}

func (h tkHeap) swap(i, j int) { h[i], h[j] = h[j], h[i]; h[i].idx = i; h[j].idx = j }

func newTopK(capacity int) *topK {
	return &topK{cap: capacity, entries: make(map[string]*tkEntry), hll: newHLL()}
}

func (t *topK) add(v string, mem int64) {
	t.hll.add(v)
	if e, ok := t.entries[v]; ok {
		e.count++
		e.memory += max(mem, 0)
		t.h.down(e.idx)
		return
	}
	v = strings.Clone(v) // do not pin the record's key
	if len(t.entries) < t.cap {
		e := &tkEntry{value: v, count: 1, memory: max(mem, 0)}
		t.entries[v] = e
		t.h.push(e)
		return
	}
	t.evicted = true
	e := t.h[0] // the least counted value gives its slot away
	delete(t.entries, e.value)
	e.value, e.err, e.count, e.memory = v, e.count, e.count+1, max(mem, 0)
	t.entries[v] = e
	t.h.down(0)
}

// GroupCount is one value of a capture with its count and memory.
type GroupCount struct {
	Value       Text  `json:"value"`
	Count       int64 `json:"count"`
	MaxError    int64 `json:"max_error,omitempty"` // count may be over by at most this
	MemoryBytes int64 `json:"memory_bytes"`
}

func (t *topK) top(n int) []GroupCount {
	all := make([]*tkEntry, 0, len(t.entries))
	for _, e := range t.entries {
		all = append(all, e)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].count != all[j].count {
			return all[i].count > all[j].count
		}
		return all[i].value < all[j].value
	})
	if len(all) > n {
		all = all[:n]
	}
	out := make([]GroupCount, len(all))
	for i, e := range all {
		out[i] = GroupCount{Value: Text(e.value), Count: e.count, MaxError: e.err, MemoryBytes: e.memory}
	}
	return out
}

// distinct returns the exact distinct count while nothing was evicted, else
// the HyperLogLog estimate.
func (t *topK) distinct() (int64, bool) {
	if !t.evicted {
		return int64(len(t.entries)), true
	}
	return t.hll.estimate(), false
}

// hll is a HyperLogLog sketch with 2^12 registers (~1.6% standard error).
type hll struct {
	seed maphash.Seed
	reg  []uint8
}

const hllP = 12

var hllSeed = maphash.MakeSeed()

func newHLL() hll { return hll{seed: hllSeed, reg: make([]uint8, 1<<hllP)} }

func (h *hll) add(v string) {
	x := maphash.String(h.seed, v)
	i := x >> (64 - hllP)
	rho := uint8(bits.LeadingZeros64(x<<hllP|1<<(hllP-1)) + 1)
	if rho > h.reg[i] {
		h.reg[i] = rho
	}
}

func (h *hll) estimate() int64 {
	m := float64(len(h.reg))
	sum, zeros := 0.0, 0
	for _, r := range h.reg {
		sum += math.Ldexp(1, -int(r))
		if r == 0 {
			zeros++
		}
	}
	est := 0.7213 / (1 + 1.079/m) * m * m / sum
	if est <= 2.5*m && zeros > 0 {
		est = m * math.Log(m/float64(zeros)) // small-range correction
	}
	return int64(est + 0.5)
}
