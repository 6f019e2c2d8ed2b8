package inspect

import (
	"fmt"
	"time"

	"github.com/idemctl/idemctl/inspect/dedup"
	"github.com/idemctl/idemctl/inspect/topology"
)

// walk is the live key source: SCAN MATCH COUNT from cursor 0 (or a
// sample's random start) until the cursor comes round, a limit stops it,
// or the scan is cancelled, handing batches of keys to the readers.
func (s *nodeScan) walk() {
	var cursor uint64
	smp := newSampling(s.opt)
	if smp != nil {
		cursor = smp.start
	}
	if s.scanInScript() {
		var done bool
		if cursor, done = s.walkScript(smp, cursor); done {
			return
		}
	}
	s.walkClient(smp, cursor)
}

// walkClient is the walk by the client's SCAN from cursor, its batches
// read by the record readers.
func (s *nodeScan) walkClient(smp *sampling, cursor uint64) {
	limiter := newRateLimiter(s.opt.KeysPerSec, s.opt.Count)
	var ahead *scanAhead // this turn's SCAN, already read with the last batch
	for {
		keys, next, err := s.scanCall(cursor, ahead)
		ahead = nil
		if err != nil {
			s.fail(fmt.Errorf("SCAN: %w", err))
			return
		}
		if !s.take(keys) {
			return
		}
		var gap time.Duration
		if s.pace != nil {
			s.count, gap = s.pace.Adjust()
		}
		if len(s.pending)+len(s.locks) > 0 && (s.pace != nil || time.Since(s.pendingSince) >= s.opt.FlushAfter) {
			// Under a budget the next SCAN rides with this batch's last
			// pipeline; if the scan stops here its reply goes unused.
			var a *scanAhead
			if s.pace != nil && len(s.pending) > 0 && (next != 0 || smp != nil) {
				a = &scanAhead{cursor: next, match: s.ks.Match, count: int64(s.count)}
			}
			if !s.send(a) {
				return
			}
			if a != nil && a.cmd != nil {
				ahead = a
			}
		}
		cursor = next
		if s.advance(smp, next) || !limiter.wait(s.ctx, len(keys), max(s.opt.Pause, gap)) {
			return
		}
	}
}

// scanCall is one SCAN: ahead's reply when it rode with the last batch.
func (s *nodeScan) scanCall(cursor uint64, ahead *scanAhead) ([]string, uint64, error) {
	if ahead != nil {
		return ahead.cmd.Result()
	}
	if s.pace != nil {
		s.pace.Begin()
		defer s.pace.End()
	}
	return s.n.Client.Scan(s.ctx, cursor, s.ks.Match, int64(s.count)).Result()
}

// take adds one SCAN reply's keys to the pending batch, once each, lock
// keys apart; false when a limit or a stopped scan ends the walk.
func (s *nodeScan) take(keys []string) bool {
	lock := s.ks.Schema.Lock
	for _, k := range keys {
		fresh, stop := s.admit(k)
		if stop {
			return false
		}
		if !fresh {
			continue
		}
		if len(s.pending) == 0 && len(s.locks) == 0 {
			s.pendingSince = time.Now()
		}
		if lock != nil {
			if _, isLock := lock.RecordKey(k); isLock {
				s.cov.Companions++ // shown with its record, counted once
				if lock.Orphans {
					s.locks = append(s.locks, k)
				}
				if len(s.locks) >= s.count && !s.send(nil) {
					return false
				}
				continue
			}
		}
		s.pending = append(s.pending, k)
		if len(s.pending) >= s.count && !s.send(nil) {
			return false
		}
	}
	return true
}

// admit counts one key SCAN returned: fresh the first time it is met,
// stop when MaxKeys ends the walk before it.
func (s *nodeScan) admit(k string) (fresh, stop bool) {
	if !s.seen.Add(k) {
		s.cov.Duplicates++
		return false, false
	}
	if s.opt.MaxKeys > 0 && s.cov.Keys >= s.opt.MaxKeys {
		s.cov.Limited = true
		return false, true
	}
	s.cov.Keys++
	return true, false
}

// advance records how far the cursor came; true when the walk is done:
// the cursor came round, or the sample has its share or its time.
func (s *nodeScan) advance(smp *sampling, next uint64) bool {
	switch {
	case smp != nil: // past the end of the table order it goes on from 0
		share, done := smp.after(next, s.cov.Started)
		s.prog.set(s.task, share)
		if done {
			s.cov.Sampled, s.cov.Share = true, share
			return true
		}
	case next == 0:
		s.cov.Complete = true
		s.prog.set(s.task, 1)
		return true
	default:
		s.prog.set(s.task, CursorShare(next))
	}
	if s.seen.NeedPlan() {
		s.seen.Plan(dedupEstimate(s.opt, s.n, s.cov.Keys, s.prog.get(s.task), time.Since(s.cov.Started)))
	}
	return false
}

// dedupEstimate is how many keys a scan will meet, from one node's first
// keys and the share of its table they came from (0: too early to tell).
// Keys spread over a cluster's nodes by slot, so a node serving a quarter
// of the slots stands for a quarter of the keys.
func dedupEstimate(opt Options, n topology.Node, keys int64, share float64, elapsed time.Duration) int64 {
	if share <= 0 || (keys < dedup.PlanKeys && share < 1.0/256) {
		return 0
	}
	perNode := float64(keys) / share
	if opt.Sample > 0 && opt.Sample < 1 {
		perNode *= opt.Sample
	}
	if opt.SampleTime > 0 && elapsed > 0 {
		perNode = min(perNode, float64(keys)*opt.SampleTime.Seconds()/elapsed.Seconds())
	}
	if opt.MaxKeys > 0 {
		perNode = min(perNode, float64(opt.MaxKeys))
	}
	nodes := 1.0
	if n.NSlots > 0 {
		nodes = float64(topology.ClusterSlots) / float64(n.NSlots)
	}
	return int64(perNode * nodes)
}
