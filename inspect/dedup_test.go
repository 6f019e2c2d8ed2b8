package inspect

import (
	"strconv"
	"testing"
)

func TestDedupSet(t *testing.T) {
	d := newDedup()
	for i := range 100_000 {
		if !d.add("k" + strconv.Itoa(i)) {
			t.Fatalf("key %d reported as seen", i)
		}
	}
	for i := range 100_000 {
		if d.add("k" + strconv.Itoa(i)) {
			t.Fatalf("key %d not remembered", i)
		}
	}
	if d.n != 100_000 || len(d.slots) > 262144 {
		t.Fatalf("n %d, %d slots", d.n, len(d.slots))
	}
}
