package sandbox

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/verify"
)

// Orders is the demo application's database: the orders its requests
// created, by idempotency record key. The simulator tells it of each
// order as it creates one (also for workers that crash after creating
// theirs), and the seeded history is given one for about half of its
// stuck requests. The demo's verify hook asks it, so V shows real
// verdicts: done where the order exists, not_done where it does not.
type Orders struct {
	mu      sync.Mutex
	byKey   map[string]order
	inserts int
}

type order struct {
	ref string
	at  time.Time
}

// ordersKept bounds the table: an order older than this belongs to a
// record that expired long ago (the demo's retention is 10 minutes).
const ordersKept = time.Hour

func newOrders() *Orders { return &Orders{byKey: map[string]order{}} }

// Created notes the order a request created.
func (o *Orders) Created(key, ref string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := time.Now()
	o.byKey[key] = order{ref: ref, at: now}
	if o.inserts++; o.inserts%1024 == 0 {
		for k, v := range o.byKey {
			if now.Sub(v.at) > ordersKept {
				delete(o.byKey, k)
			}
		}
	}
}

// Lookup is the order a record's request created, if any.
func (o *Orders) Lookup(key string) (string, time.Time, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	v, ok := o.byKey[key]
	return v.ref, v.at, ok
}

// Hook is the keyspace's verify hook over this table: it answers in the
// JSON a real hook prints, read by the same parser.
func (o *Orders) Hook() *verify.Hook {
	return &verify.Hook{Command: []string{"demo-orders"}, Builtin: o.verdict}
}

func (o *Orders) verdict(_ context.Context, rec *inspect.Record) []byte {
	ref, at, ok := o.Lookup(rec.Key)
	v := map[string]any{"verdict": "not_done", "detail": "no order for this request in the demo's orders table"}
	if ok {
		resp, _ := json.Marshal(map[string]string{"order_id": ref, "state": "created"})
		v = map[string]any{"verdict": "done", "ref": ref, "status": 201, "response": string(resp),
			"detail": "order " + ref + " created " + at.UTC().Format(time.RFC3339)}
	}
	out, _ := json.Marshal(v)
	return out
}

// recordSeeded gives the seeded history its orders: of the stuck requests
// seeded (keys with a "req-" request id, still processing), those whose
// key hashes even had their order created before the worker died.
func (o *Orders) recordSeeded(ctx context.Context, c redis.UniversalClient) error {
	var cursor uint64
	for {
		keys, next, err := c.Scan(ctx, cursor, "atlasmart:*:req-*", 1000).Result()
		if err != nil {
			return err
		}
		pipe := c.Pipeline()
		states := make([]*redis.StringCmd, len(keys))
		for i, k := range keys {
			states[i] = pipe.HGet(ctx, k, "state")
		}
		if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
			return err
		}
		for i, k := range keys {
			if states[i].Val() == "PROCESSING" && seededDone(k) {
				o.Created(k, "ord-"+k[strings.LastIndex(k, ":req-")+5:])
			}
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}

// seededDone decides, once and for good, whether a seeded stuck request
// had created its order.
func seededDone(key string) bool {
	h := fnv.New32a()
	h.Write([]byte(key))
	return h.Sum32()%2 == 0
}
