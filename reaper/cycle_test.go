package reaper

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idemctl/idemctl/internal/testkit/recordtest"
)

// Each skip reason, and only what is provably orphaned is acted on: a
// record in flight is not even a candidate.
func TestSkipReasons(t *testing.T) {
	c := jobs(t,
		job{key: "job:orphan", age: 30 * time.Minute},
		job{key: "job:fresh", age: 10 * time.Second},
		job{key: "job:locked", age: 30 * time.Minute, lock: true},
		job{key: "job:future", age: 30 * time.Minute, deadlineIn: time.Hour},
		job{key: "job:passed", age: 30 * time.Minute, deadlineIn: -time.Minute},
		job{key: "job:noage", age: -1},
		job{key: "job:done", state: "SUCCEEDED", age: 30 * time.Minute},
	)
	p := policy(t, basePolicy, false)
	audit := recordtest.AuditPath(t)
	rep := newReaper(t, c, p, true, audit).Cycle(t.Context())
	if rep.Err != "" || !rep.Lease.Held || len(rep.Rules) != 1 {
		t.Fatalf("cycle: %+v", rep)
	}
	rr := rep.Rules[0]
	wantSkips := map[string]int{SkipLockPresent: 1, SkipDeadlineFuture: 1, SkipAgeUnknown: 1}
	if !maps.Equal(rr.Skips, wantSkips) {
		t.Errorf("skips %v, want %v", rr.Skips, wantSkips)
	}
	if rr.Candidates != 5 || rr.Qualified != 2 || rr.Outcomes["applied"] != 2 || rr.Breaker || !rr.Complete {
		t.Errorf("report %+v", rr)
	}
	got := applied(t, audit)
	if len(got) != 2 || got["job:orphan"] != "reaper/test" || got["job:passed"] != "reaper/test" {
		t.Errorf("applied %v", got)
	}
	if st := c.HGet(t.Context(), "job:orphan", "state").Val(); st != "FAILED" {
		t.Errorf("orphan state %q", st)
	}
	if by := c.HGet(t.Context(), "job:orphan", "failed_by").Val(); by != "reaper/test" {
		t.Errorf("failed_by %q", by)
	}
	for _, k := range []string{"job:fresh", "job:locked", "job:future", "job:noage"} {
		if st := c.HGet(t.Context(), k, "state").Val(); st != "PROCESSING" {
			t.Errorf("%s was written: %q", k, st)
		}
	}

	// A rule that wants the library's deadline passed skips records
	// storing none.
	writeJobs(t, c, job{key: "job:nodeadline", age: time.Hour})
	p = policy(t, strings.Replace(basePolicy, "action: fail", "action: fail\n    select: {deadline_passed: true}", 1), false)
	rr = newReaper(t, c, p, false, "").Cycle(t.Context()).Rules[0]
	// job:nodeadline, and job:locked and job:noage left from above
	if want := map[string]int{SkipDeadlineUnknown: 3, SkipDeadlineFuture: 1}; !maps.Equal(rr.Skips, want) {
		t.Errorf("deadline_passed: skips %v", rr.Skips)
	}
}

// A dry run writes nothing at all: not a record, not the lease, not the
// budget, not an audit line; it reports what it would do.
func TestDryRunWritesNothing(t *testing.T) {
	c := jobs(t, orphans("a", 5)...)
	writeJobs(t, c, job{key: "job:locked", age: time.Hour, lock: true})
	before := dumpAll(t, c)
	p := policy(t, basePolicy, false)
	audit := recordtest.AuditPath(t)
	rep := newReaper(t, c, p, false, audit).Cycle(t.Context())
	if rep.Err != "" || len(rep.Rules) != 1 || rep.Rules[0].Outcomes[WouldApply] != 5 || rep.Rules[0].Skips[SkipLockPresent] != 1 {
		t.Fatalf("dry run: %+v", rep)
	}
	if after := dumpAll(t, c); !maps.Equal(before, after) {
		t.Errorf("a dry run changed the database:\nbefore %v\nafter  %v", before, after)
	}
	if _, err := os.Stat(audit); !os.IsNotExist(err) {
		t.Errorf("a dry run wrote an audit log: %v", err)
	}
}

// More qualifying records than the threshold: the breaker trips and
// nothing is written, nor audited; the metric counts the trip.
func TestBreakerTrips(t *testing.T) {
	c := jobs(t, orphans("b", 12)...)
	before := dumpAll(t, c)
	doc := strings.Replace(basePolicy, "breaker: 100", "breaker: 10", 1)
	doc = strings.Replace(doc, "max_per_cycle: 50", "max_per_cycle: 5", 1)
	p := policy(t, doc, false)
	audit := recordtest.AuditPath(t)
	r := newReaper(t, c, p, true, audit)
	rep := r.Cycle(t.Context())
	rr := rep.Rules[0]
	if !rr.Breaker || rr.Qualified != 12 || len(rr.Outcomes) != 0 || !strings.Contains(rr.Note, "circuit breaker") {
		t.Fatalf("breaker: %+v", rr)
	}
	after := dumpAll(t, c)
	delete(after, p.LeaseKey) // the lease is the one key a holder writes
	delete(before, p.LeaseKey)
	if !maps.Equal(before, after) {
		t.Errorf("the breaker tripped but records changed")
	}
	if got := applied(t, audit); len(got) != 0 {
		t.Errorf("audited writes: %v", got)
	}
	if v := counterValue(t, r.Metrics, "idemctl_reap_breaker_trips_total"); v != 1 {
		t.Errorf("breaker_trips_total %v", v)
	}
}

// max_per_cycle and the hourly budget bound the writes, and the budget
// is shared by every cycle (and every copy) through Redis.
func TestLimits(t *testing.T) {
	c := jobs(t, orphans("l", 8)...)
	doc := strings.Replace(basePolicy, "max_per_cycle: 50", "max_per_cycle: 3", 1)
	doc = strings.Replace(doc, "per_hour: 1000", "per_hour: 5", 1)
	p := policy(t, doc, false)
	audit := recordtest.AuditPath(t)
	want := []struct {
		applied int
		skips   map[string]int
	}{
		{3, map[string]int{SkipMaxPerCycle: 5}},
		{2, map[string]int{SkipHourBudget: 3}},
		{0, map[string]int{SkipHourBudget: 3}},
	}
	for i, w := range want {
		// a new copy each cycle, as cron runs it
		r := newReaper(t, c, p, true, audit)
		rr := r.Cycle(t.Context()).Rules[0]
		if rr.Outcomes["applied"] != w.applied || !maps.Equal(rr.Skips, w.skips) {
			t.Errorf("cycle %d: applied %d skips %v, want %d %v (%s)", i+1, rr.Outcomes["applied"], rr.Skips, w.applied, w.skips, rr.Note)
		}
		// the cron copy exits: it releases the lease
		if err := r.Lease.Release(t.Context(), c); err != nil {
			t.Fatal(err)
		}
	}
	if got := applied(t, audit); len(got) != 5 {
		t.Errorf("%d records written in the hour, budget 5", len(got))
	}
	// oldest first
	for _, k := range []string{"job:l7", "job:l6", "job:l5", "job:l4", "job:l3"} {
		if _, ok := applied(t, audit)[k]; !ok {
			t.Errorf("%s (among the oldest) was not written first", k)
		}
	}
}

// A scan that does not cover the keyspace acts on nothing: the breaker's
// count would be wrong.
func TestIncompleteScanActsOnNothing(t *testing.T) {
	c := jobs(t, orphans("i", 5)...)
	audit := recordtest.AuditPath(t)
	r := newReaper(t, c, policy(t, basePolicy, false), true, audit)
	r.Scan.MaxKeys = 2
	rr := r.Cycle(t.Context()).Rules[0]
	if rr.Complete || len(rr.Outcomes) != 0 || !strings.Contains(rr.Note, "did not cover the keyspace") {
		t.Fatalf("incomplete scan: %+v", rr)
	}
	if got := applied(t, audit); len(got) != 0 {
		t.Errorf("wrote %v on an incomplete scan", got)
	}
}

// The lease: taken NX, renewed and released only by its holder; another
// copy acts on nothing and names the holder.
func TestLeaseHolderOnly(t *testing.T) {
	c := jobs(t, orphans("h", 2)...)
	ctx := t.Context()
	p := policy(t, basePolicy, false)
	a, b := newReaper(t, c, p, true, recordtest.AuditPath(t)), newReaper(t, c, p, true, recordtest.AuditPath(t))
	if rep := a.Cycle(ctx); !rep.Lease.Held || rep.Rules[0].Outcomes["applied"] != 2 {
		t.Fatalf("first copy: %+v", rep)
	}
	writeJobs(t, c, orphans("h2-", 2)...)
	rep := b.Cycle(ctx)
	if rep.Lease.Held || len(rep.Rules) != 0 || !strings.Contains(rep.Lease.String(), a.Lease.Token) {
		t.Fatalf("second copy acted or did not name the holder: %+v %q", rep, rep.Lease.String())
	}
	// b cannot release a's lease, nor renew it as its own
	if err := b.Lease.Release(ctx, c); err != nil {
		t.Fatal(err)
	}
	if v := c.Get(ctx, p.LeaseKey).Val(); v != a.Lease.Token {
		t.Fatalf("lease is now %q", v)
	}
	b.Lease.held = true // as if b believed it held it (a pause past its TTL)
	if err := b.Lease.Release(ctx, c); err != nil || c.Get(ctx, p.LeaseKey).Val() != a.Lease.Token {
		t.Fatalf("a stale holder dropped another's lease: %v", err)
	}
	if st, _ := b.Lease.Acquire(ctx, c); st.Held {
		t.Fatal("a stale holder renewed another's lease")
	}
	// a renews each cycle; on exit it releases and b takes over
	if rep := a.Cycle(ctx); !rep.Lease.Held {
		t.Fatalf("holder lost its lease: %+v", rep)
	}
	if ttl := c.PTTL(ctx, p.LeaseKey).Val(); ttl <= p.LeaseTTL-time.Second {
		t.Errorf("renewal did not extend the lease: %v", ttl)
	}
	if err := a.Lease.Release(ctx, c); err != nil {
		t.Fatal(err)
	}
	if rep := b.Cycle(ctx); !rep.Lease.Held || rep.Rules[0].Outcomes["applied"] != 0 {
		// a's last cycle wrote h2-*: nothing is left for b
		t.Fatalf("after release: %+v", rep)
	}
}

// Two reapers against one Redis, cycling and handing the lease back and
// forth (as cron copies that exit) while the application keeps orphaning
// records: their acting windows, from their own audit logs, never overlap,
// and no record is written twice.
func TestTwoReapersNeverActTogether(t *testing.T) {
	c := jobs(t)
	doc := strings.NewReplacer("cycle_deadline: 10s", "cycle_deadline: 2s", "max_per_cycle: 50", "max_per_cycle: 5",
		"per_hour: 1000", "per_hour: 100000", "breaker: 100", "breaker: 100000").Replace(basePolicy)
	p := policy(t, doc, false)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the application, crashing now and then
		defer wg.Done()
		for i := 0; ctx.Err() == nil; i++ {
			writeJobs(t, c, orphans(fmt.Sprintf("w%d-", i), 3)...)
			time.Sleep(20 * time.Millisecond)
		}
	}()
	audits := []string{recordtest.AuditPath(t), recordtest.AuditPath(t)}
	held := make([]int, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := newReaper(t, c, p, true, audits[i])
			for ctx.Err() == nil {
				rep := r.Cycle(ctx)
				if rep.Lease.Held {
					held[i]++
				}
				if rand.IntN(3) == 0 { // this copy exits, another starts
					_ = r.Lease.Release(t.Context(), c)
					r = newReaper(t, c, p, true, audits[i])
				}
				time.Sleep(time.Duration(rand.IntN(15)) * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	for _, path := range audits {
		for _, e := range recordtest.AuditLines(t, path) {
			if e.Actor != "reaper/test" {
				t.Fatalf("actor %q", e.Actor)
			}
		}
	}
	runs, written := recordtest.ActedApart(t, audits...)
	if runs[0] == 0 || runs[1] == 0 {
		t.Fatalf("not a race: acting cycles %v (lease held %v)", runs, held)
	}
	t.Logf("acting cycles %v, lease held %v cycles, %d records written", runs, held, len(written))
}

// Without a shared lease (two policies of different names on one
// keyspace, or a failover that lost it) two reapers may act at once, and
// still no record is written twice: each write is a compare-and-set on
// the version both read.
func TestNoRecordWrittenTwiceWithoutTheLease(t *testing.T) {
	c := jobs(t, orphans("both", 40)...)
	audits := []string{recordtest.AuditPath(t), recordtest.AuditPath(t)}
	var wg sync.WaitGroup
	for i, name := range []string{"left", "right"} {
		p := policy(t, strings.Replace(basePolicy, "name: test", "name: "+name, 1), false)
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := newReaper(t, c, p, true, audits[i])
			for range 3 {
				r.Cycle(t.Context())
			}
		}()
	}
	wg.Wait()
	written := map[string]int{}
	for _, path := range audits {
		for _, e := range recordtest.AuditLines(t, path) {
			if e.Phase == "outcome" && e.Outcome == "applied" {
				written[e.Key]++
			}
		}
	}
	if len(written) != 40 {
		t.Errorf("%d of 40 records written", len(written))
	}
	for k, n := range written {
		if n != 1 {
			t.Errorf("%s written %d times", k, n)
		}
	}
}
