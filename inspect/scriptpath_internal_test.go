package inspect

import (
	"github.com/idemctl/idemctl/inspect/pace"

	"testing"
	"time"
)

// Calls are sized from the server time a key took: a dearer batch shrinks
// the next calls at once, a cheaper one grows them slowly, and the size
// stays between the pacer's floor and ceiling.
func TestScriptCallSizing(t *testing.T) {
	p := &scriptPath{cap: time.Millisecond}
	p.perKey.Store(int64(scriptGuess))
	if n := p.callKeys(); n != 160 { // 80 % of 1 ms at 5 µs a key
		t.Errorf("first calls: %d keys, want 160", n)
	}
	p.served(100, 1600*time.Microsecond) // 16 µs a key
	if n := p.callKeys(); n != 50 {
		t.Errorf("after a dear batch: %d keys, want 50", n)
	}
	p.served(100, 400*time.Microsecond) // 4 µs a key: a quarter of the way
	if n := p.callKeys(); n != 61 {     // 0.8 ms / 13 µs
		t.Errorf("after a cheap batch: %d keys, want 58", n)
	}
	p.served(1, time.Second)
	if n := p.callKeys(); n != pace.MinBatch {
		t.Errorf("a very slow server: %d keys, want the floor %d", n, pace.MinBatch)
	}
	p.perKey.Store(1)
	if n := p.callKeys(); n != pace.MaxBatch {
		t.Errorf("a very fast server: %d keys, want the ceiling %d", n, pace.MaxBatch)
	}
}
