package inspect

import (
	"hash/maphash"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/idemctl/idemctl/inspect/topology"
)

func TestDedupSet(t *testing.T) {
	const n = 1_000_000
	d := newDedup()
	defer d.free()
	for i := range n {
		if i == planKeys {
			d.plan(n) // what the scanner does once it can estimate
		}
		if !d.add("k" + strconv.Itoa(i)) {
			t.Fatalf("key %d reported as seen", i)
		}
	}
	for i := range n {
		if d.add("k" + strconv.Itoa(i)) {
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
	d.free()
	if d.bytes() != 0 {
		t.Fatal("free kept the table")
	}
}

// More keys than planned add segments beside the first: every key is
// still remembered, and the memory stays within twice the need.
func TestDedupGrowsBeside(t *testing.T) {
	d := newDedup()
	defer d.free()
	d.plan(10_000)
	const n = 200_000
	for i := range n {
		if !d.add("k" + strconv.Itoa(i)) {
			t.Fatalf("key %d reported as seen", i)
		}
	}
	for i := range n {
		if d.add("k" + strconv.Itoa(i)) {
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
	d := newDedup()
	defer d.free()
	d.fpMask = 1<<bits - 1
	d.plan(n)
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
		if !d.add(key) {
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

func TestDedupEstimate(t *testing.T) {
	standalone, quarter := topology.Node{}, topology.Node{NSlots: topology.ClusterSlots / 4}
	for _, c := range []struct {
		name  string
		opt   Options
		n     topology.Node
		keys  int64
		share float64
		want  int64
	}{
		{"too early", Options{}, standalone, 100, 0.001, 0},
		{"whole", Options{}, standalone, 40_000, 0.004, 10_000_000},
		{"enough keys", Options{}, standalone, planKeys, 0.001, planKeys * 1000},
		{"one of four nodes", Options{}, quarter, 40_000, 0.004, 40_000_000},
		{"sample", Options{Sample: 0.01}, standalone, 40_000, 0.004, 100_000},
		{"max keys", Options{MaxKeys: 50_000}, standalone, 40_000, 0.004, 50_000},
		{"sample time", Options{SampleTime: 10 * time.Second}, standalone, 40_000, 0.004, 400_000},
	} {
		if got := dedupEstimate(c.opt, c.n, c.keys, c.share, time.Second); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
