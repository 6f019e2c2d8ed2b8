package follow_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/follow"
	"github.com/idemctl/idemctl/internal/testkit/inspecttest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// A schema with lock companions (marker + lock): a lone lock is a record
// keyed by the lock; the response written makes it the record's; the lock
// removed changes the record. The view follows each as a scan shows it.
func TestFollowLockCompanions(t *testing.T) {
	_, c := redistest.SharedClient(t)
	ks := inspecttest.Keyspace(t, "marker-lock")
	v, _ := startFollowing(t, c, ks, follow.Options{})
	v.waitDone(t, 1, 10*time.Second)
	ctx := context.Background()
	now := func() string { return fmt.Sprintf("%.3f", float64(time.Now().UnixMilli())/1000) }
	lock, rec := "idempotency_keys:lock:a", "idempotency_keys:a"
	c.Set(ctx, lock, now(), time.Minute)
	waitRecord(t, v, lock, func(r inspect.Record, ok bool) bool { return ok && r.Flags.Has(inspect.FlagLockOnly) })
	c.Set(ctx, rec, `{"status":201,"response":"{}"}`, time.Hour)
	waitRecord(t, v, rec, func(r inspect.Record, ok bool) bool { return ok && r.State == inspect.StateSucceeded })
	waitRecord(t, v, lock, func(_ inspect.Record, ok bool) bool { return !ok })
	c.Del(ctx, lock)
	c.Set(ctx, "idempotency_keys:lock:b", now(), 0)
	waitRecord(t, v, "idempotency_keys:lock:b", func(_ inspect.Record, ok bool) bool { return ok })
	time.Sleep(500 * time.Millisecond)
	fresh := freshPass(t, c, ks)
	if d := diff(v.snapshot(), fresh); len(d) > 0 || len(fresh) != 2 {
		t.Fatalf("%d records, differences: %q", len(fresh), d)
	}
	got := v.snapshot()[rec]
	if got.LockTTLms != fresh[rec].LockTTLms {
		t.Errorf("lock TTL followed %d, fresh %d", got.LockTTLms, fresh[rec].LockTTLms)
	}
}
