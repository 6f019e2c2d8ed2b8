package inspect

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// Under a budget each batch says how long the server spent on its longest
// pipeline, by the server's clock; otherwise it costs no extra command.
func TestFetchServerSpan(t *testing.T) {
	_, c := redistest.SharedClient(t)
	ctx := t.Context()
	s, err := Preset("atlasmart")
	if err != nil {
		t.Fatal(err)
	}
	ks, err := NewKeyspace(KeyspaceSpec{Name: "span", Schema: s, ReserveTTL: time.Hour, ProcessingTimeout: time.Minute, Retention: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 2000)
	pipe := c.Pipeline()
	for i := range keys {
		keys[i] = fmt.Sprintf("atlasmart:ch23:idem:span:POST:/orders:%d", i)
		pipe.HSet(ctx, keys[i], "fingerprint", "abc", "state", "SUCCEEDED", "status", "201", "response", strings.Repeat("x", 500))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	for _, span := range []bool{true, false} {
		f := &fetcher{c: c, ks: ks, memOn: newTrue(), span: span}
		res, err := f.fetch(ctx, keys)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.records) != len(keys) {
			t.Fatalf("%d records", len(res.records))
		}
		// 2,000 keys take the server well over a microsecond a key, and
		// well under a second.
		if span && (res.serverSpan < 2*time.Millisecond || res.serverSpan > time.Second) || !span && res.serverSpan != 0 {
			t.Fatalf("span %v: server time %v", span, res.serverSpan)
		}
	}
}
