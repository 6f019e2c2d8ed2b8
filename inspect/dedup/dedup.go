// Package dedup remembers the keys a scan has been handed, so a key SCAN
// returns twice (a table that shrank or rehashed, a slot that migrated)
// is reported once, in about 6 bytes a key kept outside the Go heap.
//
// Floor 0 of ARCHITECTURE.md, a foundation: it may import the other
// foundations (internal/offheap).
package dedup

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/idemctl/idemctl/internal/offheap"
)

// Set remembers the keys SCAN has returned, so that a key returned twice
// (the server's table shrank or rehashed mid-scan, a slot migrated) is
// reported once. At 10M keys a table of 64-bit hashes, doubled as it grew
// and doubled again by GC headroom, was most of a 428 MB peak. So:
//
//   - a key is a 40-bit fingerprint in one of two candidate buckets of 8
//     slots (two choices, no relocation: at the 87 % load it is sized for,
//     about 0.3 % of keys find both buckets full and go to a small overflow
//     map of full hashes);
//   - the table is sized once, from the scan's own early rate: while the
//     first keys arrive they are held as full hashes, and once a node has
//     seen PlanKeys keys or 1/256 of its table, plan sizes the table for
//     its estimate plus 15 % and moves them in. Fingerprints cannot be
//     rehashed, so more keys than planned add a segment beside the first,
//     never a copy of it: two tables are never held for one;
//   - the slots live outside the Go heap (anonymous mmap where there is
//     one), so GC pacing does not double them, and free returns them.
//
// 40 B a bucket of 8 is 5 B a slot, 5.75 B a key at the planned count.
// A new key is dropped only if an earlier key has its fingerprint in one of
// its two buckets: at most 16 × load / 2^40 a key per segment, so a scan of
// n keys drops one with probability about 16 × n × 0.44 / 2^40 (loads grow
// from 0 to 0.87): 6.4e-5 at 10M keys, 6.4e-6 at 1M (TestDedupFalseDrops
// checks the formula at a narrower fingerprint). Coverage counts the
// duplicates removed.
type Set struct {
	mu      sync.Mutex // shared by the nodes of one scan
	fpSeed  maphash.Seed
	ixSeed  maphash.Seed
	fpMask  uint64            // fingerprint bits kept (tests narrow it)
	probe   map[uint64]uint64 // before plan: fingerprint hash -> index hash
	segs    []fpTable
	slots   int64               // in all segments
	over    map[uint64]struct{} // keys whose buckets were full, by fingerprint hash
	n       int64
	planned bool
}

const (
	fpBits  = 40
	fpSlots = 8
	// PlanKeys is how many keys a node's scan holds as full hashes
	// before its table can be sized from its rate.
	PlanKeys = 1 << 16
	// planSlack sizes the table for keys added while the scan runs and
	// for the estimate's error; past maxLoad a segment is added.
	planSlack = 1.15
	maxLoad   = 0.95
	minSlots  = 1 << 12
)

// fpBucket holds 8 fingerprints of 40 bits: low 32 and high 8 apart so the
// bucket packs into 40 bytes. Slots fill from the left; 0 is empty.
type fpBucket struct {
	lo [fpSlots]uint32
	hi [fpSlots]uint8
}

type fpTable struct {
	mem     []byte // what was mapped, for free
	buckets []fpBucket
}

func New() *Set {
	return &Set{fpSeed: maphash.MakeSeed(), ixSeed: maphash.MakeSeed(), fpMask: 1<<fpBits - 1,
		probe: map[uint64]uint64{}, over: map[uint64]struct{}{}}
}

// Add reports whether key is new.
func (d *Set) Add(key string) bool {
	hf, hi := maphash.String(d.fpSeed, key), maphash.String(d.ixSeed, key)
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.planned {
		if _, ok := d.probe[hf]; ok {
			return false
		}
		d.probe[hf] = hi
		d.n++
		return true
	}
	if !d.insert(hf, hi) {
		return false
	}
	d.n++
	return true
}

// NeedPlan reports whether the table is still to be sized.
func (d *Set) NeedPlan() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return !d.planned
}

// Plan sizes the table for about expect keys and moves the keys held so
// far into it. Only the first call counts; 0 waits for a later one.
func (d *Set) Plan(expect int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.planned || expect <= 0 {
		return
	}
	d.planned = true
	d.grow(max(int64(float64(max(expect, d.n))*planSlack), minSlots))
	for hf, hi := range d.probe {
		d.insert(hf, hi)
	}
	d.probe = nil
}

// grow adds a segment of about slots slots.
func (d *Set) grow(slots int64) {
	nb := (slots + fpSlots - 1) / fpSlots
	mem := offheap.Alloc(int(nb) * int(unsafe.Sizeof(fpBucket{})))
	d.segs = append(d.segs, fpTable{mem: mem, buckets: unsafe.Slice((*fpBucket)(unsafe.Pointer(&mem[0])), nb)})
	d.slots += nb * fpSlots
	dedupBytes.Add(int64(len(mem)))
}

// dedupBytes is what every live table holds: memory the collector cannot
// see, so a table not freed would be a leak no GC recovers.
var dedupBytes atomic.Int64

// Bytes is the memory the running scans' duplicate tables hold
// outside the Go heap; 0 once every scan has ended.
func Bytes() int64 { return dedupBytes.Load() }

// insert adds a key by its two hashes; false when it is already there.
func (d *Set) insert(hf, hi uint64) bool {
	fp := hf >> (64 - fpBits) & d.fpMask
	if fp == 0 {
		fp = 1 // 0 marks an empty slot
	}
	lo, hi8 := uint32(fp), uint8(fp>>32)
	var b1, b2 *fpBucket
	var n1, n2 int
	for s := range d.segs {
		bs := d.segs[s].buckets
		b1, b2 = &bs[reduce(uint32(hi), len(bs))], &bs[reduce(uint32(hi>>32), len(bs))]
		var found bool
		if n1, found = b1.find(lo, hi8); found {
			return false
		}
		if n2, found = b2.find(lo, hi8); found {
			return false
		}
	}
	if _, ok := d.over[hf]; ok {
		return false
	}
	// b1, b2 are in the newest segment, the only one still filled.
	if n2 < n1 {
		b1, n1 = b2, n2
	}
	if n1 < fpSlots {
		b1.lo[n1], b1.hi[n1] = lo, hi8
	} else {
		d.over[hf] = struct{}{}
	}
	if float64(d.n+1) > maxLoad*float64(d.slots) {
		d.grow(d.slots) // more keys than planned: double, beside
	}
	return true
}

// find looks for a fingerprint; it returns the slots in use when absent.
func (b *fpBucket) find(lo uint32, hi uint8) (int, bool) {
	for i := range fpSlots {
		switch {
		case b.lo[i] == lo && b.hi[i] == hi:
			return i, true
		case b.lo[i] == 0 && b.hi[i] == 0:
			return i, false
		}
	}
	return fpSlots, false
}

// reduce maps a 32-bit hash onto [0, n) without a division.
func reduce(h uint32, n int) int { return int(uint64(h) * uint64(n) >> 32) }

// bytes is what the table holds: slots, overflow and probe entries.
func (d *Set) bytes() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	var b int64
	for _, s := range d.segs {
		b += int64(len(s.mem))
	}
	return b + int64(len(d.over)+len(d.probe))*16
}

// Free returns the table's memory; the set must not be used after.
func (d *Set) Free() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, s := range d.segs {
		offheap.Free(s.mem)
		dedupBytes.Add(-int64(len(s.mem)))
	}
	d.segs, d.probe, d.over = nil, nil, nil
}
