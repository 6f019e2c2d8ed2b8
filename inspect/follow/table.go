package follow

import (
	"unsafe"

	"github.com/idemctl/idemctl/internal/offheap"
)

// table maps a key's 64-bit hash to its entry: open addressing with
// linear probing over 16-byte slots, in memory mapped outside the Go heap
// (internal/offheap). A Go map of the same pairs costs 25–38 bytes a
// record and the collector's headroom doubles that in RSS (68 bytes a
// record measured at 1M records by the benchmark's follow step); here a
// record costs 16 bytes over the load (19–38), returned to the system
// when the table grows or is closed. Deletion shifts the following slots
// back, so there are no tombstones and lookups stay short.
type table struct {
	mem   []byte
	slots []slot
	mask  uint64
	n     int
}

// slot is one pair; h == 0 marks it empty (a hash of 0 is stored as 1).
type slot struct {
	h uint64
	e entry
}

const (
	tableMin     = 1 << 10
	tableMaxLoad = 0.85
)

func newTable() *table {
	t := &table{}
	t.alloc(tableMin)
	return t
}

func (t *table) alloc(n int) {
	t.mem = offheap.Alloc(n * int(unsafe.Sizeof(slot{})))
	t.slots = unsafe.Slice((*slot)(unsafe.Pointer(&t.mem[0])), n)
	t.mask = uint64(n - 1)
}

func nonzero(h uint64) uint64 {
	if h == 0 {
		return 1
	}
	return h
}

// find is h's slot, or the empty slot where it would go.
func (t *table) find(h uint64) (i uint64, ok bool) {
	for i = h & t.mask; ; i = (i + 1) & t.mask {
		switch t.slots[i].h {
		case h:
			return i, true
		case 0:
			return i, false
		}
	}
}

func (t *table) get(h uint64) (entry, bool) {
	i, ok := t.find(nonzero(h))
	return t.slots[i].e, ok
}

func (t *table) set(h uint64, e entry) {
	h = nonzero(h)
	i, ok := t.find(h)
	if !ok {
		if float64(t.n+1) > tableMaxLoad*float64(len(t.slots)) {
			t.grow()
			i, _ = t.find(h)
		}
		t.n++
	}
	t.slots[i] = slot{h: h, e: e}
}

// del removes h, shifting back the slots of its run that probed past it.
func (t *table) del(h uint64) bool {
	i, ok := t.find(nonzero(h))
	if !ok {
		return false
	}
	t.n--
	for j := (i + 1) & t.mask; t.slots[j].h != 0; j = (j + 1) & t.mask {
		home := t.slots[j].h & t.mask
		// j's entry may move to i when i lies on its probe path: between
		// its home and j, cyclically.
		if (j-home)&t.mask >= (j-i)&t.mask {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = slot{}
	return true
}

func (t *table) grow() {
	old, oldMem := t.slots, t.mem
	t.alloc(2 * len(old))
	for _, s := range old {
		if s.h != 0 {
			i, _ := t.find(s.h)
			t.slots[i] = s
		}
	}
	offheap.Free(oldMem)
}

// each calls fn for every pair; fn must not change the table.
func (t *table) each(fn func(h uint64, e entry)) {
	for _, s := range t.slots {
		if s.h != 0 {
			fn(s.h, s.e)
		}
	}
}

func (t *table) len() int { return t.n }

// close returns the table's memory; the table is empty after.
func (t *table) close() {
	if t.mem != nil {
		offheap.Free(t.mem)
	}
	t.mem, t.slots, t.n = nil, nil, 0
}
