package follow_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect/follow"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// TestFollowSentinelFailover: the primary is demoted by a Sentinel
// failover while the application writes; the follower sees it (a
// heartbeat finds a replica, or the connection is killed), follows the new
// primary, re-syncs, and ends equal to a fresh pass.
func TestFollowSentinelFailover(t *testing.T) {
	se := redistest.StartSentinel(t)
	failover := func() *redis.Client {
		c := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: se.Master, SentinelAddrs: se.SentinelAddrs(), MaxRetries: 5})
		t.Cleanup(func() { c.Close() })
		return c
	}
	app, watcher := failover(), failover()
	ks := equivKeyspace(t)
	w := startWorkload(app, 4*time.Second, 3)
	time.Sleep(time.Second)
	v, f := startFollowing(t, watcher, ks, follow.Options{})
	v.waitDone(t, 1, 20*time.Second)
	time.Sleep(2 * time.Second)

	ctx := context.Background()
	before, err := se.CurrentPrimary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sc := redis.NewSentinelClient(&redis.Options{Addr: se.SentinelAddrs()[0]})
	defer sc.Close()
	if err := sc.Failover(ctx, se.Master).Err(); err != nil {
		t.Fatalf("SENTINEL FAILOVER: %v", err)
	}
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if now, _ := se.CurrentPrimary(ctx); now != before && now != "" {
			break
		}
		if time.Now().After(end) {
			t.Fatal("no failover within 30s")
		}
	}
	v.waitDone(t, 2, 30*time.Second)
	time.Sleep(4 * time.Second)
	w.stop()
	w = startWorkload(app, 300*time.Second, 4)
	time.Sleep(3 * time.Second)
	w.stop()
	checkQuiescent(t, v, f, app, ks, 2)
}
