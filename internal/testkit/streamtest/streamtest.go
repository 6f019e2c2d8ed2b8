// Package streamtest builds the consumer-group fixture the stream tests
// share, on a real server, with idle times and delivery counts set
// exactly (XCLAIM … IDLE … RETRYCOUNT), never by sleeping.
//
// A test kit (ARCHITECTURE.md): imported by tests only.
package streamtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// SeedGroups builds stream key with group billing: six entries added an
// hour ago (IDs from the server's clock); c1 read three, c2 two, one of
// c1's acknowledged (ids[1]), one left undelivered (ids[5]). c1's first
// entry is idle 10m (stale after the default 5m), its third delivered 7
// times (poison after 5); c2's two are idle 1s, delivered once. Group
// audit read nothing. It returns the six IDs.
func SeedGroups(t testing.TB, c redis.UniversalClient, key string) []string {
	t.Helper()
	ctx := context.Background()
	now, err := c.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	base := now.Add(-time.Hour).UnixMilli()
	var ids []string
	for i := 1; i <= 6; i++ {
		id := fmt.Sprintf("%d-%d", base, i)
		if err := c.XAdd(ctx, &redis.XAddArgs{Stream: key, ID: id, Values: []any{"n", i}}).Err(); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	for _, cmd := range [][]any{
		{"xgroup", "create", key, "billing", "0"},
		{"xgroup", "create", key, "audit", "$"},
		{"xreadgroup", "group", "billing", "c1", "count", 3, "streams", key, ">"},
		{"xreadgroup", "group", "billing", "c2", "count", 2, "streams", key, ">"},
		{"xack", key, "billing", ids[1]},
		{"xclaim", key, "billing", "c1", 0, ids[0], "idle", 600000, "retrycount", 1, "justid"},
		{"xclaim", key, "billing", "c1", 0, ids[2], "idle", 1000, "retrycount", 7, "justid"},
		{"xclaim", key, "billing", "c2", 0, ids[3], "idle", 1000, "retrycount", 1, "justid"},
		{"xclaim", key, "billing", "c2", 0, ids[4], "idle", 1000, "retrycount", 1, "justid"},
	} {
		if err := c.Do(ctx, cmd...).Err(); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	return ids
}
