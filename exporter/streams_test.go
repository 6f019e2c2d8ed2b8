package exporter

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect/streams"
	"github.com/idemctl/idemctl/internal/testkit/promtest"
)

// Two streams of one keyspace, each with a billing group: the gauges sum
// the group over them; an entry idle past the timeout is stale, one
// delivered past max_deliveries poison.
func TestStreamGauges(t *testing.T) {
	sp := streams.Space{Name: "orders", Match: "ev:*", ProcessingTimeout: time.Minute}.WithDefaults()
	c, e := ownExporter(t, func(cfg *Config) { cfg.Streams = []*streams.Space{&sp} })
	ctx := t.Context()
	for _, s := range []string{"ev:a", "ev:b"} {
		c.XGroupCreateMkStream(ctx, s, "billing", "$")
		for range 3 {
			c.XAdd(ctx, &redis.XAddArgs{Stream: s, Values: []any{"n", 1}})
		}
		c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "billing", Consumer: "w1", Streams: []string{s, ">"}, Count: 10})
	}
	ids := c.XRange(ctx, "ev:a", "-", "+").Val()
	c.Do(ctx, "XCLAIM", "ev:a", "billing", "w1", 0, ids[0].ID, "IDLE", 600000, "JUSTID")
	c.Do(ctx, "XCLAIM", "ev:b", "billing", "w1", 0, c.XRange(ctx, "ev:b", "-", "+").Val()[1].ID, "RETRYCOUNT", 9, "JUSTID")
	c.XAck(ctx, "ev:b", "billing", c.XRange(ctx, "ev:b", "-", "+").Val()[2].ID)
	m := scanned(t, e)
	promtest.Expect(t, m, map[string]float64{
		"idemctl_stream_streams{keyspace=orders}":                       2,
		"idemctl_stream_pending_entries{group=billing,keyspace=orders}": 5,
		"idemctl_stream_stale_entries{group=billing,keyspace=orders}":   1,
		"idemctl_stream_poison_entries{group=billing,keyspace=orders}":  1,
		"idemctl_stream_lag_entries{group=billing,keyspace=orders}":     0,
		"idemctl_stream_read_truncated{keyspace=orders}":                0,
	})
	if age := m["idemctl_stream_oldest_pending_age_seconds{group=billing,keyspace=orders}"]; age < 0 || age > 30 {
		t.Errorf("oldest age %v s", age)
	}
}
