package inspect

import (
	"hash/maphash"
	"sync"
)

// dedup remembers keys SCAN has returned, as 64-bit hashes in an
// open-addressing table: 1M keys cost 16 MB (8 bytes a slot, at most 3/4
// full) instead of the keys themselves or a Go map's ~45 bytes an entry. A
// collision (about 1 in 3e7 at 1M keys) would drop one key; the coverage
// counts duplicates it removed.
type dedup struct {
	mu    sync.Mutex // shared by the nodes of one scan
	seed  maphash.Seed
	slots []uint64 // 0 = empty
	n     int
}

func newDedup() *dedup {
	return &dedup{seed: maphash.MakeSeed(), slots: make([]uint64, 1024)}
}

// add reports whether key is new.
func (d *dedup) add(key string) bool {
	h := maphash.String(d.seed, key)
	if h == 0 {
		h = 1 // 0 marks an empty slot
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if !insert(d.slots, h) {
		return false
	}
	d.n++
	if d.n*4 > len(d.slots)*3 {
		grown := make([]uint64, len(d.slots)*2)
		for _, v := range d.slots {
			if v != 0 {
				insert(grown, v)
			}
		}
		d.slots = grown
	}
	return true
}

// insert adds h with linear probing; false when it is already there.
func insert(slots []uint64, h uint64) bool {
	mask := uint64(len(slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch slots[i] {
		case 0:
			slots[i] = h
			return true
		case h:
			return false
		}
	}
}
