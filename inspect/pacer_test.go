package inspect

import (
	"testing"
	"time"
)

// The pacer cuts the batch at once when a probe waited most of the budget,
// grows it slowly while probes stay well under, and holds it without news.
func TestPacerAdjust(t *testing.T) {
	p := &pacer{budget: time.Millisecond, idle: 100 * time.Microsecond, size: 100}
	if got := p.adjust(); got != 100 {
		t.Fatalf("no probe: size %d, want 100", got)
	}
	p.observe(200 * time.Microsecond) // 100 µs above idle: well under
	if got := p.adjust(); got != 112 {
		t.Fatalf("calm probes: size %d, want 112", got)
	}
	p.observe(150 * time.Microsecond)
	p.observe(950 * time.Microsecond) // 850 µs above idle: over 3/4 of the budget
	if got := p.adjust(); got != 67 {
		t.Fatalf("a slow probe: size %d, want 67", got)
	}
	p.observe(600 * time.Microsecond) // 500 µs above: neither calm nor over
	if got := p.adjust(); got != 67 {
		t.Fatalf("a middling probe: size %d, want 67", got)
	}
	for range 20 {
		p.observe(5 * time.Millisecond)
		p.adjust()
	}
	if p.size != paceMinBatch {
		t.Fatalf("floor: size %d", p.size)
	}
	for range 200 {
		p.observe(p.idle)
		p.adjust()
	}
	if p.size != paceMaxBatch {
		t.Fatalf("ceiling: size %d", p.size)
	}
}
