package follow_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect/follow"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// TestFollowCluster: on a 3-primary cluster, a watch connection per
// primary; the application writes across the slots, every primary is
// flushed in the middle, and the view ends equal to a fresh pass.
func TestFollowCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	app, watcher := cl.Client(), cl.Client()
	t.Cleanup(func() { app.Close(); watcher.Close() })
	ks := equivKeyspace(t)
	w := startWorkload(app, 4*time.Second, 5)
	time.Sleep(time.Second)
	v, f := startFollowing(t, watcher, ks, follow.Options{})
	v.waitDone(t, 1, 20*time.Second)
	time.Sleep(4 * time.Second)
	err := app.ForEachMaster(context.Background(), func(ctx context.Context, c *redis.Client) error {
		return c.FlushDB(ctx).Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	v.waitDone(t, 2, 20*time.Second)
	time.Sleep(3 * time.Second)
	w.stop()
	w = startWorkload(app, 300*time.Second, 6)
	time.Sleep(3 * time.Second)
	w.stop()
	checkQuiescent(t, v, f, app, ks, 2)
}

// TestFollowClusterFailover: a replica of one shard takes over (CLUSTER
// FAILOVER) while the application writes; the watch on the demoted node
// is given up, the new primary watched, the view re-synced, and it ends
// equal to a fresh pass.
func TestFollowClusterFailover(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 1)
	redistest.WaitClusterReplicasSynced(t, cl, 30*time.Second)
	app, watcher := cl.Client(), cl.Client()
	t.Cleanup(func() { app.Close(); watcher.Close() })
	ks := equivKeyspace(t)
	w := startWorkload(app, 4*time.Second, 7)
	time.Sleep(time.Second)
	v, f := startFollowing(t, watcher, ks, follow.Options{})
	v.waitDone(t, 1, 20*time.Second)
	time.Sleep(2 * time.Second)
	ctx := context.Background()
	var (
		mu      sync.Mutex
		replica string
	)
	err := app.ForEachSlave(ctx, func(ctx context.Context, c *redis.Client) error {
		mu.Lock() // called concurrently, one goroutine per replica
		defer mu.Unlock()
		if replica == "" {
			replica = c.Options().Addr
		}
		return nil
	})
	if err != nil || replica == "" {
		t.Fatalf("no replica: %v", err)
	}
	rc := redis.NewClient(&redis.Options{Addr: replica})
	defer rc.Close()
	if err := rc.Do(ctx, "CLUSTER", "FAILOVER").Err(); err != nil {
		t.Fatalf("CLUSTER FAILOVER on %s: %v", replica, err)
	}
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if role, _ := rc.Do(ctx, "ROLE").Slice(); len(role) > 0 && role[0] == "master" {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the replica was not promoted within 30s")
		}
	}
	v.waitDone(t, 2, 30*time.Second)
	time.Sleep(4 * time.Second)
	w.stop()
	w = startWorkload(app, 300*time.Second, 8)
	time.Sleep(3 * time.Second)
	w.stop()
	checkQuiescent(t, v, f, app, ks, 2)
}
