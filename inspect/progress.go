package inspect

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// How far a scan has come, from the SCAN cursor itself. Redis walks its
// hash table in reverse-binary bucket order, so the cursor with its bits
// reversed, over 2^64, is the share of buckets already visited whatever the
// table's size — and keys are spread evenly over buckets, so it is also
// about the share of keys seen. A rehash during the scan makes it
// approximate, never wrong by more than a table doubling.

// CursorShare is the share of the keyspace a SCAN cursor has visited; the
// final cursor 0 is the whole of it only once the scan has wrapped, which
// the caller knows.
func CursorShare(cursor uint64) float64 {
	return float64(bits.Reverse64(cursor)) / (1 << 64)
}

// Progress is how far a scan has come, for a progress line: the share of
// the keyspace visited, the records read, and the time it took.
type Progress struct {
	Done    float64
	Records int64
	Elapsed time.Duration
}

// Rate is records per second so far.
func (p Progress) Rate() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Records) / p.Elapsed.Seconds()
}

// Left estimates the time to the end from the pace so far; false until
// there is enough to go on.
func (p Progress) Left() (time.Duration, bool) {
	if p.Done < 0.001 || p.Elapsed < 200*time.Millisecond {
		return 0, false
	}
	return time.Duration(float64(p.Elapsed) * (1 - p.Done) / p.Done), true
}

// progress is the share done of each keyspace-and-node task of one scan.
type progress struct {
	parts []atomic.Uint64 // share × shareScale
}

const shareScale = 1 << 30

func newProgress(tasks int) *progress { return &progress{parts: make([]atomic.Uint64, max(tasks, 1))} }

func (p *progress) set(task int, share float64) {
	p.parts[task].Store(uint64(min(max(share, 0), 1) * shareScale))
}

func (p *progress) get(task int) float64 { return float64(p.parts[task].Load()) / shareScale }

// done is the mean share over all tasks: a keyspace not yet started counts 0.
func (p *progress) done() float64 {
	var sum uint64
	for i := range p.parts {
		sum += p.parts[i].Load()
	}
	return float64(sum) / float64(len(p.parts)) / shareScale
}
