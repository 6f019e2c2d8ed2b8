// Package topk counts the most frequent values of a stream in bounded
// memory (Space-Saving, exact while the values fit) and estimates how many
// distinct values it held (HyperLogLog): the top captures of a keyspace.
//
// Floor 0 of ARCHITECTURE.md, a foundation: it imports nothing of
// idemctl's.
package topk

import (
	"hash/maphash"
	"math"
	"math/bits"
	"sort"
	"strings"
	"unsafe"
)

// Counter counts the most frequent values of one template capture in bounded
// memory (the Space-Saving algorithm): exact while the distinct values fit
// in its capacity, otherwise each count is an upper bound with a known error.
// Distinct values are estimated with a HyperLogLog sketch.
//
// A keyspace-wide capture (the idempotency key) makes every record a new
// value and an eviction, so the entries are found through an open-addressing
// table on the HyperLogLog's hash (one hash per record instead of four map
// hashes), an evicted entry's bytes are reused for its successor, and the
// heap and the table hold the counts and hashes they compare inline.
type Counter struct {
	cap     int
	tab     []tkSlot // linear probing; len a power of two, at most half full
	h       tkHeap
	evicted bool
	hll     hll
}

type tkSlot struct {
	hash uint64
	e    *tkEntry // nil: free
}

type tkEntry struct {
	value  string // aliases buf: rewritten when the entry is evicted
	buf    []byte
	hash   uint64
	err    int64 // overestimate bound inherited on eviction
	memory int64
	idx    int // in the heap, whose node holds the count
}

// tkHeap is a min-heap on count. Counts only grow, so an entry only ever
// moves down; written out rather than through container/heap's interface
// calls because a keyspace-wide capture (the idempotency key itself) makes
// every record an eviction at the root.
type tkHeap []tkNode

type tkNode struct {
	count int64
	e     *tkEntry
}

func (h *tkHeap) push(n tkNode) {
	n.e.idx = len(*h)
	*h = append(*h, n)
	h.up(n.e.idx)
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

func (h tkHeap) swap(i, j int) { h[i], h[j] = h[j], h[i]; h[i].e.idx = i; h[j].e.idx = j }

// New is a counter of at most capacity values.
func New(capacity int) *Counter {
	return &Counter{cap: capacity, tab: make([]tkSlot, 16), hll: newHLL()}
}

// Add counts one v of mem bytes.
func (t *Counter) Add(v string, mem int64) {
	x := maphash.String(t.hll.seed, v)
	t.hll.addHash(x)
	if e := t.find(v, x); e != nil {
		t.h[e.idx].count++
		e.memory += max(mem, 0)
		t.h.down(e.idx)
		return
	}
	if len(t.h) < t.cap {
		e := &tkEntry{memory: max(mem, 0)}
		e.set(v, x)
		if 2*(len(t.h)+1) > len(t.tab) {
			t.grow()
		}
		t.place(e)
		t.h.push(tkNode{count: 1, e: e})
		return
	}
	t.evicted = true
	root := &t.h[0] // the least counted value gives its slot away
	e := root.e
	t.remove(e)
	e.set(v, x)
	e.err, e.memory = root.count, max(mem, 0)
	root.count++
	t.place(e)
	t.h.down(0)
}

// set makes v the entry's value, copied into its own bytes so that it does
// not pin the record's key; the bytes of an evicted value are reused.
func (e *tkEntry) set(v string, hash uint64) {
	e.buf = append(e.buf[:0], v...)
	e.value, e.hash = unsafe.String(unsafe.SliceData(e.buf), len(e.buf)), hash
}

func (t *Counter) find(v string, hash uint64) *tkEntry {
	mask := uint64(len(t.tab) - 1)
	for i := hash & mask; ; i = (i + 1) & mask {
		sl := &t.tab[i]
		if sl.e == nil || sl.hash == hash && sl.e.value == v {
			return sl.e
		}
	}
}

func (t *Counter) grow() {
	old := t.tab
	t.tab = make([]tkSlot, 2*len(old))
	for _, sl := range old {
		if sl.e != nil {
			t.place(sl.e)
		}
	}
}

// place puts e (not in the table) in the first free slot from its home.
func (t *Counter) place(e *tkEntry) {
	mask := uint64(len(t.tab) - 1)
	i := e.hash & mask
	for t.tab[i].e != nil {
		i = (i + 1) & mask
	}
	t.tab[i] = tkSlot{hash: e.hash, e: e}
}

// remove takes e out of the table by backward shift: the entries after it
// in its run move up unless their home slot lies between (no tombstones).
func (t *Counter) remove(e *tkEntry) {
	mask := uint64(len(t.tab) - 1)
	i := e.hash & mask
	for t.tab[i].e != e {
		i = (i + 1) & mask
	}
	for j := (i + 1) & mask; t.tab[j].e != nil; j = (j + 1) & mask {
		home := t.tab[j].hash & mask
		if (j-home)&mask >= (j-i)&mask { // home is at or before the hole
			t.tab[i] = t.tab[j]
			i = j
		}
	}
	t.tab[i] = tkSlot{}
}

// Entry is one counted value.
type Entry struct {
	Value    string
	Count    int64
	MaxError int64 // Count may be over by at most this
	Memory   int64 // summed over the value's adds
}

// Top is the n values counted most, most first.
func (t *Counter) Top(n int) []Entry {
	all := append(tkHeap(nil), t.h...)
	sort.Slice(all, func(i, j int) bool {
		if all[i].count != all[j].count {
			return all[i].count > all[j].count
		}
		return all[i].e.value < all[j].e.value
	})
	if len(all) > n {
		all = all[:n]
	}
	out := make([]Entry, len(all))
	for i, nd := range all {
		// A copy: the entry's bytes are reused when it is evicted.
		out[i] = Entry{Value: strings.Clone(nd.e.value), Count: nd.count, MaxError: nd.e.err, Memory: nd.e.memory}
	}
	return out
}

// Len is how many values the counter holds.
func (t *Counter) Len() int { return len(t.h) }

// Distinct returns the exact distinct count while nothing was evicted, else
// the HyperLogLog estimate.
func (t *Counter) Distinct() (int64, bool) {
	if !t.evicted {
		return int64(len(t.h)), true
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

func (h *hll) add(v string) { h.addHash(maphash.String(h.seed, v)) }

// addHash adds a value by its maphash under h.seed.
func (h *hll) addHash(x uint64) {
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
