package inspect

import (
	"math/rand/v2"
	"time"
)

// sampling stops a node's scan once it has visited a share of the table or
// run for a time. It starts at a random cursor: the buckets from there on
// in the table's order are as random a subset of the keys as any, since
// keys land in buckets by hash, and another start is another sample.
type sampling struct {
	share   float64       // stop at this share (1: only the time limit)
	limit   time.Duration // stop after this long (0: only the share)
	start   uint64
	from    float64 // CursorShare(start)
	wrapped bool    // the cursor came back to 0 once
}

func newSampling(o Options) *sampling {
	if (o.Sample <= 0 || o.Sample >= 1) && o.SampleTime <= 0 {
		return nil
	}
	s := &sampling{share: o.Sample, limit: o.SampleTime}
	if s.share <= 0 || s.share >= 1 {
		s.share = 1
	}
	if o.SampleStart != nil {
		s.start = o.SampleStart()
	} else {
		s.start = rand.Uint64()
	}
	s.from = CursorShare(s.start)
	return s
}

// after takes the cursor SCAN returned and says the share visited since the
// start and whether to stop.
func (s *sampling) after(next uint64, started time.Time) (share float64, done bool) {
	if next == 0 {
		if s.wrapped || s.from == 0 {
			return 1, true // all the way round
		}
		s.wrapped = true
		return 1 - s.from, false
	}
	share = CursorShare(next) - s.from
	if s.wrapped || share < 0 {
		share += 1
	}
	if share >= 1 { // came round past the start
		return 1, true
	}
	return share, share >= s.share || (s.limit > 0 && time.Since(started) >= s.limit)
}
