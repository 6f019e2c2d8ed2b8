package follow_test

import (
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/follow"
)

// followed is a consumer built from the updates alone, as a script or the
// TUI would be: the records by key, and what it can check on the way.
type followed struct {
	mu       sync.Mutex
	recs     map[string]inspect.Record
	resyncs  []string
	done     int // KindResyncDone seen
	modes    []string
	inResync bool
	errs     []string
	// stale timing: expected deadline of each processing record, and how
	// late each stale report came after its deadline.
	deadline map[string]time.Time
	late     []time.Duration
	timeout  time.Duration
	// liveSince is when the first pass completed: a record whose deadline
	// came before it went stale before anyone followed.
	liveSince time.Time
	slow      []string
	// reported: processing records already reported stale (a re-sync
	// reads them again: not a new report).
	reported map[string]bool
}

func newFollowed(timeout time.Duration) *followed {
	return &followed{recs: map[string]inspect.Record{}, deadline: map[string]time.Time{}, reported: map[string]bool{}, timeout: timeout}
}

// consume reads updates until in is closed.
func (v *followed) consume(in <-chan follow.Update) {
	for u := range in {
		v.mu.Lock()
		v.apply(u)
		v.mu.Unlock()
	}
}

func (v *followed) apply(u follow.Update) {
	if u.Live && v.inResync && u.Kind != follow.KindResyncDone {
		v.errs = append(v.errs, fmt.Sprintf("%s update said Live during a re-sync", u.Kind))
	}
	switch u.Kind {
	case follow.KindMode:
		v.modes = append(v.modes, u.Mode.String()+" "+u.Reason)
	case follow.KindResync:
		v.inResync = true
		v.resyncs = append(v.resyncs, u.Reason+" at "+u.At.Format("05.000"))
	case follow.KindResyncDone:
		v.inResync = false
		v.resyncs = append(v.resyncs, "done at "+u.At.Format("05.000"))
		v.done++
		if v.liveSince.IsZero() {
			v.liveSince = u.At
		}
		if !u.Live {
			v.errs = append(v.errs, "re-sync done but not Live")
		}
	case follow.KindRemove:
		if u.Key == "" {
			v.errs = append(v.errs, "removal without a key (KeepKeys)")
		}
		delete(v.recs, u.Key)
		delete(v.deadline, u.Key)
		delete(v.reported, u.Key)
	case follow.KindUpsert, follow.KindStale:
		v.record(u)
	}
}

// record keeps u's record and checks its stale timing: a record first
// seen processing has a deadline (its age at the read against the
// timeout); a stale report is measured against it, or against the age it
// carries when it is stale on first sight.
func (v *followed) record(u follow.Update) {
	r := u.Record
	v.recs[u.Key] = r
	if r.State != inspect.StateProcessing {
		delete(v.deadline, u.Key)
		delete(v.reported, u.Key)
		return
	}
	if !r.Stale() {
		if _, ok := v.deadline[u.Key]; !ok && r.AgeMs >= 0 {
			v.deadline[u.Key] = u.At.Add(v.timeout - time.Duration(r.AgeMs)*time.Millisecond)
		}
		return
	}
	if v.reported[u.Key] {
		return
	}
	v.reported[u.Key] = true
	d, ok := v.deadline[u.Key]
	seen := ok
	if !ok && r.AgeMs >= 0 {
		d, ok = u.At.Add(v.timeout-time.Duration(r.AgeMs)*time.Millisecond), true
	}
	if ok && !v.liveSince.IsZero() && d.After(v.liveSince) {
		v.late = append(v.late, u.At.Sub(d))
		if u.At.Sub(d) > 500*time.Millisecond {
			v.slow = append(v.slow, fmt.Sprintf("%s %s late at %s (kind %s, age %d, first seen %v)", u.Key, u.At.Sub(d), u.At.Format("05.000"), u.Kind, r.AgeMs, !seen))
		}
	}
	delete(v.deadline, u.Key)
}

// overdue lists processing records whose deadline passed more than limit
// ago without a stale report.
func (v *followed) overdue(limit time.Duration) []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []string
	for k, d := range v.deadline {
		if time.Since(d) > limit {
			out = append(out, fmt.Sprintf("%s: deadline %s ago, not reported stale", k, time.Since(d).Round(time.Millisecond)))
		}
	}
	return out
}

// percentile of the stale reports' lateness.
func (v *followed) lateness() (n int, p50, p99, worst time.Duration) {
	v.mu.Lock()
	defer v.mu.Unlock()
	l := append([]time.Duration(nil), v.late...)
	if len(l) == 0 {
		return 0, 0, 0, 0
	}
	sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	return len(l), l[len(l)/2], l[len(l)*99/100], l[len(l)-1]
}

func (v *followed) snapshot() map[string]inspect.Record {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make(map[string]inspect.Record, len(v.recs))
	for k, r := range v.recs {
		out[k] = r
	}
	return out
}

// waitDone waits until n re-syncs have completed.
func (v *followed) waitDone(t *testing.T, n int, limit time.Duration) {
	t.Helper()
	end := time.Now().Add(limit)
	for time.Now().Before(end) {
		v.mu.Lock()
		d, in := v.done, v.inResync
		v.mu.Unlock()
		if d >= n && !in {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	t.Fatalf("%d re-syncs completed after %s, want %d (re-syncs: %q)", v.done, limit, n, v.resyncs)
}

// diff compares the followed records with a fresh pass's, on what does
// not move with the clock (TTL, age and memory do).
func diff(followed, fresh map[string]inspect.Record) []string {
	var out []string
	for k, f := range fresh {
		g, ok := followed[k]
		switch {
		case !ok:
			out = append(out, "missing from the followed view: "+k)
		case comparable(g) != comparable(f):
			out = append(out, fmt.Sprintf("%s: followed %+v, fresh %+v", k, comparable(g), comparable(f)))
		}
	}
	for k := range followed {
		if _, ok := fresh[k]; !ok {
			out = append(out, "in the followed view only: "+k)
		}
	}
	sort.Strings(out)
	return out
}

type cmpRecord struct {
	State                   inspect.State
	RawState, Fingerprint   string
	Status                  int32
	ResponseLen, DeadlineMs int64
	Flags                   inspect.Flags
	Type                    inspect.KeyType
}

func comparable(r inspect.Record) cmpRecord {
	return cmpRecord{r.State, r.RawState, r.Fingerprint, r.Status, r.ResponseLen, r.DeadlineMs, r.Flags, r.Type}
}
