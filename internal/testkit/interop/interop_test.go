package interop_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/internal/testkit/interop"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
	"github.com/redis/go-redis/v9"
)

// inProgressMarker is how each library's in-progress record reads.
var inProgressMarker = map[string]string{
	interop.Powertools:         `"status":"INPROGRESS"`,
	interop.NodeIdempotency:    `"status":"IN_PROGRESS"`,
	interop.ExpressIdempotency: `{"request":{`,
}

func rawRecord(t *testing.T, rdb *redis.Client, key string) (string, time.Duration) {
	t.Helper()
	ctx := t.Context()
	v, err := rdb.Get(ctx, key).Result()
	if err != nil {
		t.Fatalf("GET %q: %v", key, err)
	}
	ttl, err := rdb.PTTL(ctx, key).Result()
	if err != nil {
		t.Fatalf("PTTL %q: %v", key, err)
	}
	return v, ttl
}

func TestSmoke(t *testing.T) {
	srv, rdb := redistest.OwnClient(t)
	d := interop.Start(t, srv.Addr)
	t.Logf("versions: %v", d.Versions)

	for _, lib := range interop.Libs {
		t.Run(lib, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			key := "smoke-" + lib
			body := map[string]any{"amount": 42, "currency": "EUR"}

			// Complete a request.
			first := must(t)(d.Call(ctx, interop.Cmd{Lib: lib, Key: key + "-done", Body: body,
				Status: 201, Response: map[string]any{"id": 1}}))
			if !first.Ran || first.Status != 201 || first.BodyString() != `{"id":1}` || first.Error != "" {
				t.Fatalf("first call: %+v", first)
			}
			raw, ttl := rawRecord(t, rdb, first.RedisKey)
			t.Logf("completed record %s (PTTL %v):\n%s", first.RedisKey, ttl, raw)
			if strings.Contains(raw, inProgressMarker[lib]) && lib != interop.ExpressIdempotency {
				t.Errorf("completed record still reads in progress: %s", raw)
			}
			if lib == interop.ExpressIdempotency && !strings.Contains(raw, `"response":`) {
				t.Errorf("completed express-idempotency record has no response: %s", raw)
			}
			if ttl <= 0 {
				t.Errorf("completed record has no TTL (%v)", ttl)
			}

			// Replay it: the handler must not run, the same answer comes back.
			again := must(t)(d.Call(ctx, interop.Cmd{Lib: lib, Key: key + "-done", Body: body,
				Status: 200, Response: map[string]any{"id": 2}}))
			if again.Ran || again.Status != 201 || again.BodyString() != `{"id":1}` {
				t.Fatalf("replay: %+v", again)
			}

			// Crash inside the handler: the in-progress record stays.
			crash := must(t)(d.Call(ctx, interop.Cmd{Lib: lib, Key: key + "-crash", Body: body, Outcome: interop.Crash}))
			if !crash.Crashed || !crash.Ran || crash.RedisKey == "" {
				t.Fatalf("crash: %+v", crash)
			}
			raw, ttl = rawRecord(t, rdb, crash.RedisKey)
			t.Logf("crashed in-progress record %s (PTTL %v):\n%s", crash.RedisKey, ttl, raw)
			if !strings.Contains(raw, inProgressMarker[lib]) || strings.Contains(raw, `"response"`) {
				t.Errorf("crashed record is not in progress: %s", raw)
			}
			retry := must(t)(d.Call(ctx, interop.Cmd{Lib: lib, Key: key + "-crash", Body: body}))
			if retry.Ran || retry.Error == "" {
				t.Errorf("retry of a crashed request within its timeout: %+v", retry)
			}

			// Hold a request: a concurrent duplicate is refused, then it completes.
			held := must(t)(d.Start(ctx, lib+"-h", interop.Cmd{Lib: lib, Key: key + "-held", Body: body,
				Status: 202, Response: map[string]any{"id": 3}}))
			if !held.Started || held.RedisKey == "" {
				t.Fatalf("start: %+v", held)
			}
			raw, _ = rawRecord(t, rdb, held.RedisKey)
			if !strings.Contains(raw, inProgressMarker[lib]) {
				t.Errorf("held record is not in progress: %s", raw)
			}
			dup := must(t)(d.Call(ctx, interop.Cmd{Lib: lib, Key: key + "-held", Body: body}))
			if dup.Ran || dup.Error == "" {
				t.Errorf("duplicate of a held request: %+v", dup)
			}
			done := must(t)(d.Finish(ctx, lib+"-h"))
			if !done.Ran || done.Status != 202 || done.BodyString() != `{"id":3}` {
				t.Errorf("finish: %+v", done)
			}
		})
	}
}

// TestPowertoolsOrphanTakeover: once in_progress_expiration (now +
// getRemainingTimeInMillis) has passed, Powertools takes the record over
// under a <key>:lock and runs the handler again.
func TestPowertoolsOrphanTakeover(t *testing.T) {
	srv, rdb := redistest.OwnClient(t)
	d := interop.Start(t, srv.Addr)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	cmd := interop.Cmd{Lib: interop.Powertools, Key: "orphan", Body: map[string]any{"n": 1}, RemainingMs: 300}
	crash := cmd
	crash.Outcome = interop.Crash
	r := must(t)(d.Call(ctx, crash))
	raw, _ := rawRecord(t, rdb, r.RedisKey)
	var rec struct {
		Status               string `json:"status"`
		Expiration           int64  `json:"expiration"`
		InProgressExpiration int64  `json:"in_progress_expiration"`
	}
	if err := json.Unmarshal([]byte(raw), &rec); err != nil || rec.Status != "INPROGRESS" || rec.InProgressExpiration == 0 {
		t.Fatalf("orphan record: %s (%v)", raw, err)
	}
	if wait := time.Until(time.UnixMilli(rec.InProgressExpiration)); wait > 0 {
		time.Sleep(wait + 50*time.Millisecond)
	}
	r2 := must(t)(d.Call(ctx, cmd))
	if !r2.Ran || r2.Status != 200 {
		t.Fatalf("takeover: %+v", r2)
	}
	lock, err := rdb.PTTL(ctx, r.RedisKey+":lock").Result()
	if err != nil || lock <= 0 || lock > 10*time.Second {
		t.Errorf("%s:lock PTTL = %v, %v; want 0 < ttl <= 10s", r.RedisKey, lock, err)
	}
	raw, _ = rawRecord(t, rdb, r.RedisKey)
	t.Logf("after takeover: %s", raw)
}

// must fails the test on a driver error, else passes the reply on:
// must(t)(d.Call(ctx, cmd)).
func must(t testing.TB) func(interop.Reply, error) interop.Reply {
	return func(r interop.Reply, err error) interop.Reply {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
}
