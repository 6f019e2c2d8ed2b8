package follow_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect/follow"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// TestFollowClusterSlotMigration: a slot holding records moves to another
// primary (MIGRATE under IMPORTING/MIGRATING) while the application
// writes; each moved key is a delete on one primary and a write on the
// other, both seen, and the view ends equal to a fresh pass.
func TestFollowClusterSlotMigration(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	app, watcher := cl.Client(), cl.Client()
	t.Cleanup(func() { app.Close(); watcher.Close() })
	ks := equivKeyspace(t)
	w := startWorkload(app, 30*time.Second, 9)
	time.Sleep(2 * time.Second)
	v, f := startFollowing(t, watcher, ks, follow.Options{})
	v.waitDone(t, 1, 20*time.Second)
	time.Sleep(time.Second)
	moved := migrateSlots(t, app)
	t.Logf("moved %d keys", moved)
	time.Sleep(2 * time.Second)
	w.stop()
	checkQuiescent(t, v, f, app, ks, 1)
}

// migrateSlots moves the slots of up to 40 records of one primary to
// another, a slot at a time with the application writing in between, and
// returns how many keys it moved.
func migrateSlots(t *testing.T, c *redis.ClusterClient) int {
	t.Helper()
	ctx := context.Background()
	prims := primaries(c)
	src := redis.NewClient(&redis.Options{Addr: prims[0]})
	dst := redis.NewClient(&redis.Options{Addr: prims[1]})
	defer src.Close()
	defer dst.Close()
	keys, _, err := src.Scan(ctx, 0, "atlasmart:ch23:idem:*", 1000).Result()
	must(t, err)
	slots := map[int64]bool{}
	for _, k := range keys {
		if len(slots) < 40 {
			slots[c.ClusterKeySlot(ctx, k).Val()] = true
		}
	}
	srcID, dstID := src.Do(ctx, "CLUSTER", "MYID").Val(), dst.Do(ctx, "CLUSTER", "MYID").Val()
	host, port, _ := strings.Cut(dst.Options().Addr, ":")
	moved := 0
	for slot := range slots {
		must(t, dst.Do(ctx, "CLUSTER", "SETSLOT", slot, "IMPORTING", srcID).Err())
		must(t, src.Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", dstID).Err())
		for {
			ks, err := src.ClusterGetKeysInSlot(ctx, int(slot), 50).Result()
			must(t, err)
			if len(ks) == 0 {
				break
			}
			args := []any{"MIGRATE", host, port, "", 0, 5000, "KEYS"}
			for _, k := range ks {
				args = append(args, k)
			}
			must(t, src.Do(ctx, args...).Err())
			moved += len(ks)
		}
		for _, addr := range prims {
			n := redis.NewClient(&redis.Options{Addr: addr})
			must(t, n.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", dstID).Err())
			n.Close()
		}
		time.Sleep(20 * time.Millisecond) // the application writes in between
	}
	return moved
}

// primaries lists the cluster's primaries' addresses.
func primaries(c *redis.ClusterClient) []string {
	slots, _ := c.ClusterSlots(context.Background()).Result()
	var out []string
	seen := map[string]bool{}
	for _, s := range slots {
		if a := s.Nodes[0].Addr; !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
