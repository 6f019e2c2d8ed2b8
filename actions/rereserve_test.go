package actions

import (
	"fmt"
	"testing"
	"time"

	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/inspecttest"
)

// A re-reservation between the tool's read and its write always ends in a
// conflict: 1,200 attempts over three formats and three actions, each with
// the application deleting the record and reserving it again between plan
// and apply — with the same request body, so state and fingerprint are
// identical and only the new reservation's TTL (and, for Powertools, its
// expirations) tell the lifetimes apart. Not one write may apply, and the
// application's new record must be left byte for byte.
//
// The re-reservation comes at least 1 ms after the first (a retry crosses a
// network): a delete and a byte-identical reservation within the same
// millisecond leave nothing a client can observe, expiry time included.
func TestReReservationAlwaysConflicts(t *testing.T) {
	r := sharedRig(t)
	ctx := t.Context()
	type format struct {
		name, key string
		reserve   func(i int)
	}
	formats := []format{
		{"atlasmart", atlasKey, func(i int) {
			if _, err := appsim.Reserve.Run(ctx, r.c, []string{atlasKey}, fp("same body"), reserveTTL).Result(); err != nil {
				t.Fatal(err)
			}
		}},
		{"powertools", ptKey, func(i int) {
			r.c.SetNX(ctx, ptKey, powertoolsInProgress(time.UnixMilli(r.serverMs()), 30*time.Second), time.Hour)
		}},
		{"node-idempotency", "node-idempotency:POST:/orders:k1", func(i int) {
			r.c.SetNX(ctx, "node-idempotency:POST:/orders:k1", `{"status":"IN_PROGRESS","fingerPrint":"aa11"}`, 24*time.Hour)
		}},
	}
	reqs := []Request{
		{Kind: write.KindFail, Reason: "stuck"},
		{Kind: write.KindExpire, Reason: "retry", TTL: TTL{Mode: TTLSet}},
		{Kind: write.KindExpire, Reason: "hold", TTL: TTL{Mode: TTLSet, D: 2 * time.Hour}},
	}
	applied, conflicts := 0, 0
	for i := range 1200 {
		f := formats[i%len(formats)]
		req := reqs[(i/len(formats))%len(reqs)]
		req.Keyspace, req.Key = inspecttest.Keyspace(t, f.name), f.key
		r.c.Del(ctx, f.key)
		f.reserve(i)
		p := r.plan(req)
		if p.Refused != "" {
			t.Fatalf("attempt %d (%s %s): plan refused: %s", i, f.name, req.Kind, p.Refused)
		}
		time.Sleep(time.Millisecond)
		r.c.Del(ctx, f.key) // the application: the record expired or was released…
		f.reserve(i)        // …and the client's retry reserves it again
		now := r.raw(f.key)
		ttl := r.pttl(f.key)
		res := r.apply(p)
		switch res.Outcome {
		case write.Conflict:
			conflicts++
		case write.Applied:
			applied++
			t.Errorf("attempt %d (%s %s): applied on a re-reserved record", i, f.name, req.Kind)
		default:
			t.Fatalf("attempt %d (%s %s): %s %s", i, f.name, req.Kind, res.Outcome, res.Detail)
		}
		if got := r.raw(f.key); !sameMap(now, got) || r.pttl(f.key) > ttl {
			t.Fatalf("attempt %d (%s %s): the application's record changed: %q → %q", i, f.name, req.Kind, now, got)
		}
	}
	if applied != 0 || conflicts != 1200 {
		t.Fatalf("%d applied, %d conflicts of 1200", applied, conflicts)
	}
	t.Log(fmt.Sprintf("1200 re-reservations between read and write: %d conflicts, %d applied", conflicts, applied))
}
