package acceptance

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/idemctl/idemctl/internal/clitest"
	"github.com/idemctl/idemctl/internal/faultproxy"
	"github.com/idemctl/idemctl/internal/redistest"
)

// Never fetch an unbounded value: 50 MB values, a 64 KB key and a hash of
// 100k fields under the pattern are scanned, flagged and bounded — the
// bytes the server sends stay far below what it holds.
func TestHugeValuesAreNeverFetched(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	ctx := context.Background()
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
