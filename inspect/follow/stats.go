package follow

import "time"

// Stats is the follower's state and counters, for metrics and headers.
type Stats struct {
	Mode        Mode
	ModeReason  string
	Live        bool
	Events      int64 // changed keys the server reported
	Reads       int64 // keys read after a change (passes not counted)
	Resyncs     int64 // full passes started (the first included)
	StaleTurned int64 // records turned stale by the timer
	LastResync  time.Time
	Records     int // in the view at the last re-sync
	Pending     int // changed keys waiting to be read
}

// Stats returns a copy of the follower's counters; safe from any
// goroutine.
func (f *Follower) Stats() Stats {
	f.mu.Lock()
	s := f.stats
	f.mu.Unlock()
	s.Events = f.pend.events.Load()
	f.pend.mu.Lock()
	s.Pending = len(f.pend.keys)
	f.pend.mu.Unlock()
	return s
}

func (f *Follower) setStats(fn func(*Stats)) {
	f.mu.Lock()
	fn(&f.stats)
	f.mu.Unlock()
}
