package inspect

import (
	"fmt"
)

// startReaders starts the scan's record readers: opt.InFlight goroutines,
// each reading one batch of keys at a time in its pipelines.
func (s *nodeScan) startReaders() {
	s.work = make(chan job, s.opt.InFlight)
	for range s.opt.InFlight {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			for j := range s.work {
				s.read(j)
				if j.done != nil {
					close(j.done)
				}
			}
		}()
	}
}

// read reads one batch and sends its records.
func (s *nodeScan) read(j job) {
	if s.ctx.Err() != nil {
		return // drain
	}
	if s.pace != nil {
		s.pace.Begin()
	}
	var (
		res fetched
		err error
	)
	if j.locks {
		res, err = s.f.fetchOrphans(s.ctx, j.keys)
	} else {
		res, err = s.f.fetchAhead(s.ctx, j.keys, j.ahead)
	}
	if s.pace != nil {
		s.pace.End()
		s.pace.Served(len(j.keys), res.serverSpan) // one batch at a time: no race
	}
	if err != nil {
		s.fail(fmt.Errorf("reading %d keys: %w", len(j.keys), err))
		return
	}
	s.vanished.Add(res.vanished)
	s.records.Add(int64(len(res.records)))
	if len(res.records) == 0 {
		return
	}
	select {
	case s.out <- Batch{Keyspace: s.ks, Node: s.n.Addr, Records: res.records, ServerTimeMs: res.nowMs, Done: s.prog.done()}:
	case <-s.ctx.Done():
	}
}

// send hands the pending keys (with ahead, the next SCAN to ride along)
// and lock keys to the readers; under a budget it waits until they are
// read. False when the scan was stopped.
func (s *nodeScan) send(ahead *scanAhead) bool {
	var waits []chan struct{}
	for _, j := range []job{{keys: s.pending, ahead: ahead}, {keys: s.locks, locks: true}} {
		if len(j.keys) == 0 {
			continue
		}
		if s.pace != nil {
			j.done = make(chan struct{})
			waits = append(waits, j.done)
		}
		select {
		case s.work <- j:
		case <-s.ctx.Done():
			return false
		}
	}
	for _, w := range waits {
		select {
		case <-w:
		case <-s.ctx.Done():
			return false
		}
	}
	s.pending, s.locks = make([]string, 0, s.count), nil
	return true
}
