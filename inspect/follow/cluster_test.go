package follow_test

import (
	"context"
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
