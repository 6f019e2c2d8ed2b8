package follow

import (
	"math/rand/v2"
	"testing"
)

// The off-heap table agrees with a Go map over random sets and deletes,
// with hashes crowded into few home slots so runs wrap around and
// deletions shift long runs back, through several growths.
func TestTableAgreesWithAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tb, ref := newTable(), map[uint64]entry{}
	defer tb.close()
	// A pool of hashes: one in 20 sharing its low 12 bits with others
	// (one home slot while the table is small), one in 100 with its low
	// 20 bits set (the last slot: a run that wraps to the front).
	pool := make([]uint64, 60_000)
	for i := range pool {
		pool[i] = rng.Uint64()
		switch {
		case i%100 == 0:
			pool[i] |= 1<<20 - 1
		case i%20 == 0:
			pool[i] = pool[i]&^0xfff | 0x7
		}
	}
	for i := range 300_000 {
		h := pool[rng.IntN(len(pool))]
		switch rng.IntN(3) {
		case 0, 1:
			e := entry(rng.Uint64())
			tb.set(h, e)
			ref[nonzero(h)] = e
		case 2:
			_, had := ref[nonzero(h)]
			if got := tb.del(h); got != had {
				t.Fatalf("op %d: del(%x) = %v, map had it %v", i, h, got, had)
			}
			delete(ref, nonzero(h))
		}
		if i%10_000 == 0 {
			checkTable(t, tb, ref)
		}
	}
	checkTable(t, tb, ref)
	if len(tb.slots) <= tableMin {
		t.Fatalf("the table never grew: %d slots for %d pairs", len(tb.slots), tb.len())
	}
}

func checkTable(t *testing.T, tb *table, ref map[uint64]entry) {
	t.Helper()
	if tb.len() != len(ref) {
		t.Fatalf("len %d, map %d", tb.len(), len(ref))
	}
	for h, e := range ref {
		if got, ok := tb.get(h); !ok || got != e {
			t.Fatalf("get(%x) = %x %v, want %x", h, got, ok, e)
		}
	}
	n := 0
	tb.each(func(h uint64, e entry) {
		n++
		if ref[h] != e {
			t.Fatalf("each: %x = %x, map %x", h, e, ref[h])
		}
	})
	if n != len(ref) {
		t.Fatalf("each saw %d pairs, map holds %d", n, len(ref))
	}
}
