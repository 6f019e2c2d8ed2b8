package inspect

import (
	"testing"
	"time"
)

// The reversed cursor is the share visited: Redis's bucket order on a
// table of 8 visits 0,4,2,6,1,5,3,7, and after k of them the next cursor
// reads k/8.
func TestCursorShare(t *testing.T) {
	order := []uint64{0, 4, 2, 6, 1, 5, 3, 7}
	for k := 1; k < len(order); k++ {
		// A table of 8 buckets uses the low 3 bits; reversed over 64 bits
		// they are the top 3.
		if got, want := CursorShare(order[k]), float64(k)/8; got != want {
			t.Errorf("cursor %d: share %v, want %v", order[k], got, want)
		}
	}
	p := newProgress(4)
	p.set(0, 1)
	p.set(1, 0.5)
	if got := p.done(); got < 0.374 || got > 0.376 {
		t.Errorf("progress of 1, 0.5, 0, 0: %v", got)
	}
}

// The estimate of what is left follows the pace so far, once there is one.
func TestProgressLeft(t *testing.T) {
	if _, ok := (Progress{Done: 0.5, Elapsed: 100 * time.Millisecond}).Left(); ok {
		t.Error("an estimate after 100 ms")
	}
	p := Progress{Done: 0.25, Records: 1000, Elapsed: 2 * time.Second}
	if left, ok := p.Left(); !ok || left != 6*time.Second || p.Rate() != 500 {
		t.Errorf("a quarter in 2s: left %v %v, rate %v", left, ok, p.Rate())
	}
}
