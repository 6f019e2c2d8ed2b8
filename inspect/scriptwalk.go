package inspect

import (
	"fmt"
	"time"
)

// scanInScript reports whether this node's walk lets the read script run
// the SCAN itself: the script path is on and the schema has no companion
// lock keys (those are set apart from the records as SCAN returns them,
// which the client does).
func (s *nodeScan) scanInScript() bool {
	return s.f.script.on() && s.ks.Schema.Lock == nil
}

// scriptStep is one scan-mode call's outcome.
type scriptStep struct {
	res scanned
	ok  bool // false: go on by the client path from the call's cursor
	err error
}

// callStep runs one scan-mode call from cursor, timed by the pacer.
func (s *nodeScan) callStep(cursor uint64, count int) scriptStep {
	if s.pace != nil {
		s.pace.Begin()
		defer s.pace.End()
	}
	res, ok, err := s.f.scanScript(s.ctx, cursor, s.ks.Match, count)
	return scriptStep{res: res, ok: ok, err: err}
}

// stepCount is the next call's SCAN COUNT: the pacer's batch under a
// budget, never more than fits the script's time cap. It counts what
// SCAN visits, so a MATCH that keeps few keys still fills a call.
func (s *nodeScan) stepCount() int {
	return max(min(s.count, s.f.script.callKeys()), 1)
}

// walkScript walks the keyspace from cursor by scan-mode calls, each
// reading the keys its own SCAN found. Unthrottled, the next call is out
// while this one's records are classified and sent. It returns done, or
// the cursor from which the client path goes on when the script path
// was left.
func (s *nodeScan) walkScript(smp *sampling, cursor uint64) (uint64, bool) {
	limiter := newRateLimiter(s.opt.KeysPerSec, s.opt.Count)
	overlap := s.pace == nil && s.opt.KeysPerSec <= 0 && s.opt.Pause <= 0
	var ahead chan scriptStep
	for {
		var st scriptStep
		if ahead != nil {
			st, ahead = <-ahead, nil
		} else {
			st = s.callStep(cursor, s.stepCount())
		}
		switch {
		case st.err != nil:
			s.fail(fmt.Errorf("reading keys: %w", st.err))
			return cursor, true
		case !st.ok:
			return cursor, false
		}
		if s.pace != nil {
			s.pace.Served(st.res.count, st.res.span)
		}
		next := st.res.next
		if overlap && (next != 0 || smp != nil) {
			ahead = make(chan scriptStep, 1) // buffered: a call left unread when the walk stops ends on its own
			go func(c uint64, n int) { ahead <- s.callStep(c, n) }(next, s.stepCount())
		}
		recs, limited := s.admitStep(st.res)
		// Progress first, so the batch says how far the walk has come.
		done := limited || s.advance(smp, next)
		if !s.emit(recs, st.res.nowMs) || done {
			return next, true
		}
		var gap time.Duration
		if s.pace != nil {
			s.count, gap = s.pace.Adjust()
		}
		cursor = next
		if !limiter.wait(s.ctx, len(st.res.keys), max(s.opt.Pause, gap)) {
			return cursor, true
		}
	}
}

// admitStep counts a step's keys and classifies those met for the first
// time; limited when MaxKeys ended the walk among them.
func (s *nodeScan) admitStep(res scanned) ([]Record, bool) {
	recs := make([]Record, 0, len(res.keys))
	var vanished int64
	limited := false
	for i, k := range res.keys {
		fresh, stop := s.admit(k)
		if stop {
			limited = true
			break
		}
		switch {
		case !fresh:
		case !res.got[i]:
			vanished++
		default:
			recs = append(recs, classify(s.ks, &res.obs[i], res.nowMs))
		}
	}
	s.vanished.Add(vanished)
	s.records.Add(int64(len(recs)))
	return recs, limited
}

// emit sends a step's records; false when the scan was stopped.
func (s *nodeScan) emit(recs []Record, nowMs int64) bool {
	if len(recs) > 0 {
		select {
		case s.out <- Batch{Keyspace: s.ks, Node: s.n.Addr, Records: recs, ServerTimeMs: nowMs, Done: s.prog.done()}:
		case <-s.ctx.Done():
			return false
		}
	}
	return s.ctx.Err() == nil
}
