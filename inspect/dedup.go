package inspect

import (
	"hash/maphash"
	"sync"
)

// dedup remembers keys SCAN has returned, as 64-bit hashes: 1M keys cost
// about 16 MB instead of the keys themselves. A collision (about 1 in 3e7 at
// 1M keys) would drop one key; the coverage counts duplicates it removed.
type dedup struct {
	mu   sync.Mutex // shared by the nodes of one scan
	seed maphash.Seed
	set  map[uint64]struct{}
}

func newDedup() *dedup {
	return &dedup{seed: maphash.MakeSeed(), set: make(map[uint64]struct{}, 1024)}
}

// add reports whether key is new.
func (d *dedup) add(key string) bool {
	h := maphash.String(d.seed, key)
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.set[h]; ok {
		return false
	}
	d.set[h] = struct{}{}
	return true
}
