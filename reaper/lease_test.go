package reaper

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idemctl/idemctl/internal/recordtest"
	"github.com/idemctl/idemctl/internal/redistest"
)

// The lease: taken NX, renewed and released only by its holder; another
// copy acts on nothing and names the holder.
func TestLeaseHolderOnly(t *testing.T) {
	_, c := redistest.SharedClient(t)
	ctx := context.Background()
	write(t, c, orphans("h", 2)...)
	p := policy(t, basePolicy, false)
	a, b := newReaper(t, c, p, true, auditPath(t)), newReaper(t, c, p, true, auditPath(t))
	if rep := a.Cycle(ctx); !rep.Lease.Held || rep.Rules[0].Outcomes["applied"] != 2 {
		t.Fatalf("first copy: %+v", rep)
	}
	write(t, c, orphans("h2-", 2)...)
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
	_, c := redistest.SharedClient(t)
	doc := strings.NewReplacer("cycle_deadline: 10s", "cycle_deadline: 2s", "max_per_cycle: 50", "max_per_cycle: 5",
		"per_hour: 1000", "per_hour: 100000", "breaker: 100", "breaker: 100000").Replace(basePolicy)
	p := policy(t, doc, false)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the application, crashing now and then
		defer wg.Done()
		for i := 0; ctx.Err() == nil; i++ {
			write(t, c, orphans(fmt.Sprintf("w%d-", i), 3)...)
			time.Sleep(20 * time.Millisecond)
		}
	}()
	audits := []string{auditPath(t), auditPath(t)}
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
					_ = r.Lease.Release(context.Background(), c)
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
	_, c := redistest.SharedClient(t)
	write(t, c, orphans("both", 40)...)
	audits := []string{auditPath(t), auditPath(t)}
	var wg sync.WaitGroup
	for i, name := range []string{"left", "right"} {
		p := policy(t, strings.Replace(basePolicy, "name: test", "name: "+name, 1), false)
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := newReaper(t, c, p, true, audits[i])
			for range 3 {
				r.Cycle(context.Background())
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
