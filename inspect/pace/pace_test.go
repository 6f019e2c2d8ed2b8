package pace

import (
	"testing"
	"time"
)

// probes files n probes of round trip rtt, sent while the scan was busy or
// not, one every 2 ms before now.
func probes(p *Pacer, now time.Time, n int, busy bool, rtt time.Duration) {
	for i := n; i > 0; i-- {
		p.observe(now.Add(-time.Duration(i)*probeEvery), busy, rtt)
	}
}

// What the server spent per key caps the batch, whatever the probes say:
// one pipeline may hold the server for half the budget at most.
func TestPacerCapsBatchByServerTime(t *testing.T) {
	p := New(time.Millisecond, 100*time.Microsecond, 1000)
	p.Served(200, 2*time.Millisecond) // 10 µs a key
	if got, _ := p.Adjust(); got != 50 {
		t.Fatalf("size %d, want 50 (0.5 ms at 10 µs a key)", got)
	}
	p.Served(200, 0) // not measured: no change
	p.Served(0, time.Second)
	if p.perKey != 10*time.Microsecond {
		t.Fatalf("perKey %v after unmeasured batches", p.perKey)
	}
	for range 100 {
		p.Served(100, 100*time.Microsecond) // 1 µs a key: grows towards 500
		p.Adjust()
	}
	if p.size <= 400 || p.size > 500 {
		t.Fatalf("size %d, want (400, 500]", p.size)
	}
	// A batch the server was descheduled in the middle of reads ten times
	// the cost: a few of them among steady ones do not shrink the batch.
	for i := range 30 {
		span := 100 * time.Microsecond
		if i%5 == 0 {
			span = time.Millisecond
		}
		p.Served(100, span)
		p.Adjust()
	}
	if p.size <= 400 {
		t.Fatalf("size %d after a few slow batches among steady ones, want > 400", p.size)
	}
	// A lasting rise in cost does.
	for range perKeyBatches {
		p.Served(100, time.Millisecond)
	}
	if got, _ := p.Adjust(); got != 50 {
		t.Fatalf("size %d after a lasting rise to 10 µs a key, want 50", got)
	}
}

// Slow probes count only when one of the scan's commands was out as they
// were sent: the same slow probes while the scan was idle are someone
// else's load, and the batch keeps growing.
func TestPacerCountsOnlyItsOwnDelay(t *testing.T) {
	now := time.Now()
	p := New(time.Millisecond, 100*time.Microsecond, 100)
	probes(p, now, 60, false, 3*time.Millisecond) // the machine is busy with others
	probes(p, now, 60, true, 150*time.Microsecond)
	if got, _ := p.adjustAt(now); got != 106 {
		t.Fatalf("others' load: size %d, want 106 (grown)", got)
	}

	p = New(time.Millisecond, 100*time.Microsecond, 100)
	probes(p, now, 60, false, 150*time.Microsecond)
	probes(p, now, 60, true, time.Millisecond) // 850 µs more than apart
	if got, _ := p.adjustAt(now); got != 60 {
		t.Fatalf("own delay: size %d, want 60 (cut)", got)
	}
	// The same slow probes are not answered twice…
	if got, _ := p.adjustAt(now); got != 60 {
		t.Fatalf("second cut without new probes: size %d", got)
	}
	// …and they age out of the window.
	later := now.Add(2 * windowSpan)
	if got, _ := p.adjustAt(later); got != 63 {
		t.Fatalf("after the window: size %d, want 63", got)
	}
}

// At the smallest batch, more delay brings a gap between batches; once
// calm, the gap goes before the batch grows again.
func TestPacerGap(t *testing.T) {
	now := time.Now()
	p := New(time.Millisecond, 100*time.Microsecond, MinBatch)
	for range 4 {
		probes(p, now, cutSettle, true, 2*time.Millisecond)
		p.adjustAt(now)
	}
	if p.size != MinBatch || p.gap != 8*time.Millisecond {
		t.Fatalf("size %d gap %v, want %d and 8ms", p.size, p.gap, MinBatch)
	}
	for range 200 {
		probes(p, now, 10, true, p.gap) // nothing added beyond the level of the idle probes
		probes(p, now, 10, false, p.gap)
		p.adjustAt(now)
		if p.gap > 0 && p.size != MinBatch {
			t.Fatalf("grew to %d with a gap of %v", p.size, p.gap)
		}
	}
	if p.gap != 0 || p.size <= MinBatch {
		t.Fatalf("calm: size %d gap %v", p.size, p.gap)
	}
}

// Too few probes during the scan's own commands to judge: the scan was
// mostly idle, so the batch grows; busy throughout, the idle level before
// the scan stands in for the probes apart.
func TestPacerFewProbes(t *testing.T) {
	now := time.Now()
	p := New(time.Millisecond, 100*time.Microsecond, 100)
	probes(p, now, minCounted-1, true, 5*time.Millisecond)
	if got, _ := p.adjustAt(now); got != 106 {
		t.Fatalf("size %d, want 106", got)
	}
	probes(p, now, 40, true, time.Millisecond) // 900 µs above the idle level
	if got, _ := p.adjustAt(now); got != 63 {
		t.Fatalf("size %d, want 63", got)
	}
}
