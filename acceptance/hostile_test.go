package acceptance

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/faultproxy"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// Never fetch an unbounded value: 50 MB values, a 64 KB key and a hash of
// 100k fields under the pattern are scanned, flagged and bounded — the
// bytes the server sends stay far below what it holds.
func TestHugeValuesAreNeverFetched(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	ctx := t.Context()
	p := "atlasmart:ch23:idem:"
	big := strings.Repeat("x", 50<<20)
	c.HSet(ctx, p+"c:POST:/big:resp", "state", "SUCCEEDED", "fingerprint", strings.Repeat("a", 64), "response", big)
	c.HSet(ctx, p+"c:POST:/big:fp", "state", "PROCESSING", "fingerprint", big)
	c.Set(ctx, p+"c:POST:/big:string", big, 0)
	longKey := p + "c:POST:/" + strings.Repeat("k", 64<<10) + ":r"
	c.HSet(ctx, longKey, "state", "PROCESSING", "fingerprint", strings.Repeat("b", 64))
	fields := make([]any, 0, 200_000)
	for i := range 100_000 {
		fields = append(fields, "f"+strconv.Itoa(i), "v")
	}
	c.HSet(ctx, p+"c:POST:/wide:fields", fields...)
	c.HSet(ctx, p+"c:POST:/wide:fields", "state", "PROCESSING", "fingerprint", strings.Repeat("c", 64))

	px, err := faultproxy.Start(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	for _, cmd := range [][]string{{"scan", "-o", "ndjson"}, {"stats", "-o", "json"}} {
		_, before := px.Forwarded()
		r := clitest.Run(t, nil, append(cmd, "--url", "redis://"+px.Addr(), "--preset", "atlasmart")...)
		r.MustCode(t, 0)
		_, after := px.Forwarded()
		if got := after - before; got > 4<<20 {
			t.Fatalf("%s fetched %d bytes from a server holding 150 MB of values: reads are not bounded", cmd[0], got)
		}
		if cmd[0] != "scan" {
			continue
		}
		flags := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
			var rec struct {
				Key   string
				Flags []string
			}
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("bad line: %v", err)
			}
			flags[rec.Key] = strings.Join(rec.Flags, ",")
		}
		if len(flags) != 5 {
			t.Fatalf("%d records, want 5", len(flags))
		}
		for key, want := range map[string]string{
			p + "c:POST:/big:resp":   "large_response",
			p + "c:POST:/big:fp":     "truncated",
			p + "c:POST:/big:string": "wrong_type",
		} {
			if !strings.Contains(flags[key], want) {
				t.Errorf("%s: flags %q lack %s", key, flags[key], want)
			}
		}
		if _, ok := flags[longKey]; !ok {
			t.Error("the 64 KB key was not listed")
		}
	}
}

// Reads never walk a big value: a 1,000,000-field hash, a 1,000,000-member
// set and zset and a 1,000,000-entry stream under the pattern. Another
// client's PING stays under 50 ms through a scan, stats, the detail view's
// fetch and a write plan, and SLOWLOG holds no command over 10 ms. (MEMORY
// USAGE … SAMPLES 0 on the hash alone took ~400 ms on this server.)
func TestBigCollectionsNeverStallRedis(t *testing.T) {
	srv, c := redistest.OwnClient(t)
	ctx := t.Context()
	p := "atlasmart:ch23:idem:"
	buildBig(t, c, p)
	c.HSet(ctx, p+"c:POST:/ok:1", "state", "PROCESSING", "fingerprint", strings.Repeat("a", 64))
	c.HSet(ctx, p+"c:POST:/ok:2", "state", "SUCCEEDED", "fingerprint", strings.Repeat("b", 64), "response", "{}")
	if err := c.ConfigSet(ctx, "slowlog-log-slower-than", "10000").Err(); err != nil {
		t.Fatal(err)
	}
	c.Do(ctx, "slowlog", "reset")

	worst := watchPing(t, srv)
	for _, cmd := range [][]string{
		{"scan", "-o", "ndjson"},
		{"stats", "-o", "json"},
		{"fail", p + "c:POST:/wide:hash", "--reason", "test", "--dry-run"},
		{"expire", p + "c:POST:/wide:set", "--ttl", "1m", "--reason", "test", "--dry-run"},
		{"detect", "--match", p + "*"},
	} {
		args := append(cmd, "--url", srv.URL(0))
		if cmd[0] != "detect" {
			args = append(args, "--preset", "atlasmart")
		}
		r := clitest.Run(t, nil, args...)
		if cmd[0] == "scan" {
			r.MustCode(t, 0)
			for _, k := range []string{"hash", "set", "zset", "stream"} {
				if !strings.Contains(r.Stdout, "wide:"+k) {
					t.Errorf("scan did not list the big %s", k)
				}
			}
			if !strings.Contains(r.Stdout, "memory_estimated") {
				t.Errorf("no record says its memory is an estimate:\n%s", r.Stdout)
			}
		}
	}
	ks, err := inspect.NewKeyspace(inspect.KeyspaceSpec{Schema: mustPreset(t, "atlasmart"), Match: p + "*"})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"hash", "set", "zset", "stream"} {
		d, err := inspect.FetchDetail(ctx, c, ks, p+"c:POST:/wide:"+k)
		if err != nil {
			t.Fatalf("detail of the big %s: %v", k, err)
		}
		if !d.Record.Flags.Has(inspect.FlagMemoryEstimated) {
			t.Errorf("detail of the big %s: memory not flagged as an estimate", k)
		}
		if len(d.Fields) > 3 {
			t.Errorf("detail of the big %s fetched %d fields", k, len(d.Fields))
		}
	}
	w := worst()
	t.Logf("another client's PING: max %v", w)
	if w > 50*time.Millisecond {
		t.Errorf("another client's PING waited up to %v", w)
	}
	slow, err := c.Do(ctx, "slowlog", "get", 20).Slice()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range slow {
		t.Errorf("SLOWLOG: %v", e)
	}
}

// detect's draft reads sample hashes whole only when they are small in
// bytes too: a 3-field hash holding 20 MB is measured, never fetched.
func TestDetectDraftNeverFetchesBigHashes(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	ctx := t.Context()
	big := strings.Repeat("x", 20<<20)
	for i := range 3 {
		c.HSet(ctx, "draft:"+strconv.Itoa(i), "phase", "DONE", "body", big, "sum", strings.Repeat("ab", 32))
	}
	c.HSet(ctx, "draft:small", "phase", "DONE", "body", "{}", "sum", strings.Repeat("ab", 32))
	px, err := faultproxy.Start(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	r := clitest.Run(t, nil, "detect", "--url", "redis://"+px.Addr(), "--match", "draft:*")
	r.MustCode(t, 0)
	if _, got := px.Forwarded(); got > 4<<20 {
		t.Fatalf("detect fetched %d bytes from hashes holding 60 MB", got)
	}
	if !strings.Contains(r.Stdout, "No preset fits: a draft from 1 of 4") {
		t.Fatalf("want a draft from the one small hash:\n%s", r.Stdout)
	}
}

func mustPreset(t *testing.T, name string) *inspect.Schema {
	t.Helper()
	s, err := inspect.Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// buildBig writes the four big collections in pipelines of 1,000-element
// commands (a few seconds on a laptop).
func buildBig(t *testing.T, c *redis.Client, p string) {
	t.Helper()
	ctx := t.Context()
	const n, per = 1_000_000, 1000
	pipe := c.Pipeline()
	for b := 0; b < n/per; b++ {
		h := make([]any, 0, 2*per)
		s := make([]any, 0, per)
		z := make([]redis.Z, 0, per)
		for i := b * per; i < (b+1)*per; i++ {
			m := "m" + strconv.Itoa(i)
			h = append(h, m, "v")
			s = append(s, m)
			z = append(z, redis.Z{Score: float64(i), Member: m})
		}
		pipe.HSet(ctx, p+"c:POST:/wide:hash", h...)
		pipe.SAdd(ctx, p+"c:POST:/wide:set", s...)
		pipe.ZAdd(ctx, p+"c:POST:/wide:zset", z...)
		if b%50 == 49 {
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	c.HSet(ctx, p+"c:POST:/wide:hash", "state", "PROCESSING", "fingerprint", strings.Repeat("c", 64))
	// A stream grows one entry per XADD: a server-side loop writes them.
	const xadd = `for i = 1, tonumber(ARGV[1]) do redis.call('XADD', KEYS[1], '*', 'f', 'v') end`
	for range 10 {
		if err := c.Eval(ctx, xadd, []string{p + "c:POST:/wide:stream"}, n/10).Err(); err != nil && err != redis.Nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"hash", "set", "zset", "stream"} {
		key := p + "c:POST:/wide:" + k
		var got int64
		switch k {
		case "hash":
			got = c.HLen(ctx, key).Val()
		case "set":
			got = c.SCard(ctx, key).Val()
		case "zset":
			got = c.ZCard(ctx, key).Val()
		case "stream":
			got = c.XLen(ctx, key).Val()
		}
		if got < n {
			t.Fatalf("the big %s holds %d elements, want %d", k, got, n)
		}
	}
}

// watchPing PINGs from another connection until the returned function is
// called, which stops it and returns the longest wait.
func watchPing(t *testing.T, srv *redistest.Server) func() time.Duration {
	t.Helper()
	c := srv.Client(0)
	var (
		mu    sync.Mutex
		worst time.Duration
		wg    sync.WaitGroup
	)
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			t0 := time.Now()
			if err := c.Ping(t.Context()).Err(); err != nil {
				panic(fmt.Sprintf("PING: %v", err))
			}
			d := time.Since(t0)
			mu.Lock()
			worst = max(worst, d)
			mu.Unlock()
		}
	}()
	return func() time.Duration {
		close(stop)
		wg.Wait()
		c.Close()
		mu.Lock()
		defer mu.Unlock()
		return worst
	}
}
