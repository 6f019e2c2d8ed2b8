package dedup

import (
	"hash/maphash"
	"math"
	"strconv"
	"testing"
)

func TestDedupSet(t *testing.T) {
	const n = 1_000_000
	d := New()
	defer d.Free()
	for i := range n {
		if i == PlanKeys {
			d.Plan(n) // what the scanner does once it can estimate
		}
		if !d.Add("k" + strconv.Itoa(i)) {
			t.Fatalf("key %d reported as seen", i)
		}
	}
	for i := range n {
		if d.Add("k" + strconv.Itoa(i)) {
			t.Fatalf("key %d not remembered", i)
		}
	}
	per := float64(d.bytes()) / n
	if d.n != n || len(d.segs) != 1 || per > 6 {
		t.Fatalf("n %d, %d segments, %.2f B a key", d.n, len(d.segs), per)
	}
	if len(d.over) > n/100 {
		t.Fatalf("%d keys overflowed", len(d.over))
	}
	d.Free()
	if d.bytes() != 0 {
		t.Fatal("free kept the table")
	}
}

// More keys than planned add segments beside the first: every key is
// still remembered, and the memory stays within twice the need.
func TestDedupGrowsBeside(t *testing.T) {
	d := New()
	defer d.Free()
	d.Plan(10_000)
	const n = 200_000
	for i := range n {
		if !d.Add("k" + strconv.Itoa(i)) {
			t.Fatalf("key %d reported as seen", i)
		}
	}
	for i := range n {
		if d.Add("k" + strconv.Itoa(i)) {
			t.Fatalf("key %d not remembered", i)
		}
	}
	if len(d.segs) < 2 || d.bytes() > 2*n*6 {
		t.Fatalf("%d segments, %d bytes", len(d.segs), d.bytes())
	}
}

// The false-drop rate stated in dedup's comment (16 × load / 2^bits a key),
// checked at 12-bit fingerprints where drops are frequent enough to count:
// the drops observed match those the bucket loads predict, and the
// prediction matches the closed form.
func TestDedupFalseDrops(t *testing.T) {
	const bits, n = 12, 60_000
	d := New()
	defer d.Free()
	d.fpMask = 1<<bits - 1
	d.Plan(n)
	var predicted float64
	dropped := 0
	for i := range n {
		key := "k" + strconv.Itoa(i)
		hi := maphash.String(d.ixSeed, key)
		bs := d.segs[0].buckets
		b1, b2 := reduce(uint32(hi), len(bs)), reduce(uint32(hi>>32), len(bs))
		held := used(&bs[b1])
		if b2 != b1 {
			held += used(&bs[b2])
		}
		predicted += float64(held) / (1 << bits)
		if !d.Add(key) {
			dropped++
		}
	}
	if math.Abs(float64(dropped)-predicted) > 5*math.Sqrt(predicted)+5 {
		t.Fatalf("%d dropped, %.0f predicted", dropped, predicted)
	}
	closed := n * 16 * 0.44 / (1 << bits)
	if math.Abs(predicted-closed) > 0.15*closed {
		t.Fatalf("predicted %.0f, the comment's formula %.0f", predicted, closed)
	}
	t.Logf("%d dropped, %.0f predicted, formula %.0f", dropped, predicted, closed)
}

func used(b *fpBucket) int {
	n, _ := b.find(0, 0)
	return n
}
