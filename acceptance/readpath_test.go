package acceptance

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/recordtest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// readPathsAgree scans with the client path and with the script path and
// requires the same records, field for field: TTLs and ages may move by
// the time between the two reads, nothing else may differ. args name the
// server and keyspace; every variant of the read is tried.
func readPathsAgree(t *testing.T, args ...string) int {
	t.Helper()
	n := 0
	for _, variant := range [][]string{nil, {"--no-memory"}, {"--response-sizes"}, {"--max-value", "300"}, {"--max-latency", "1ms"}} {
		scan := func(path string) (map[string]map[string]any, time.Time) {
			at := time.Now()
			r := clitest.Run(t, nil, append(append([]string{"scan", "-o", "ndjson", "--read-path", path}, args...), variant...)...)
			if r.Code != 0 {
				t.Fatalf("scan --read-path %s %v: exit %d\n%s", path, variant, r.Code, r.Stderr)
			}
			return recordtest.NDJSONByKey(t, r.Stdout), at
		}
		client, from := scan("client")
		script, _ := scan("script")
		slack := time.Since(from).Milliseconds() + 1000
		if len(client) == 0 || len(client) != len(script) {
			t.Errorf("%v: %d records by the client path, %d by the script", variant, len(client), len(script))
		}
		for key, c := range client {
			s, ok := script[key]
			if !ok {
				t.Errorf("%v: %q read by the client path only", variant, key)
				continue
			}
			if diff := recordDiff(c, s, slack); diff != "" {
				t.Errorf("%v: %q differs between the paths: %s", variant, key, diff)
			}
		}
		n = len(client)
	}
	return n
}

// recordDiff names the fields that differ; times (ttl_ms, age_ms,
// lock_ttl_ms) may differ by up to slack ms, and only in the direction
// time moves.
func recordDiff(a, b map[string]any, slack int64) string {
	var out []string
	for k := range mergeKeys(a, b) {
		x, y := a[k], b[k]
		if strings.HasSuffix(k, "_ms") {
			if closeTimes(x, y, slack) {
				continue
			}
		} else if fmt.Sprint(x) == fmt.Sprint(y) {
			continue
		}
		out = append(out, fmt.Sprintf("%s: client %v, script %v", k, x, y))
	}
	return strings.Join(out, "; ")
}

func mergeKeys(a, b map[string]any) map[string]bool {
	m := map[string]bool{}
	for k := range a {
		m[k] = true
	}
	for k := range b {
		m[k] = true
	}
	return m
}

func closeTimes(x, y any, slack int64) bool {
	fx, okx := x.(float64)
	fy, oky := y.(float64)
	if !okx || !oky || fx < 0 || fy < 0 {
		return fmt.Sprint(x) == fmt.Sprint(y)
	}
	d := int64(fx - fy)
	return d >= -slack && d <= slack
}

// TestReadPathsAgree: every preset's fixtures, the seed's record shapes
// in each hash encoding (and with field TTLs where the server has them),
// and records built to hit every branch of the read (values over the cap,
// long fingerprints, a wide hash whose memory is sampled, other types
// under the pattern) read the same by both paths.
func TestReadPathsAgree(t *testing.T) {
	srv := redistest.Own(t)
	ctx := t.Context()
	for i, pc := range presetCases {
		c := srv.Client(i + 1)
		pc.write(ctx, c, time.Now())
		t.Run(pc.preset, func(t *testing.T) {
			readPathsAgree(t, "--url", srv.URL(i+1), "--preset", pc.preset, "--match", pc.match)
		})
	}
	c := srv.Client(0)
	seed := func(p appsim.Plan) {
		p.ReserveTTL, p.ProcessingTimeout, p.Retention, p.LargeResponse = time.Minute, 30*time.Second, 5*time.Minute, 4096
		if _, err := appsim.Seed(ctx, c, p); err != nil {
			t.Fatal(err)
		}
	}
	seed(appsim.Plan{Schema: "atlasmart", Count: 400, RandSeed: 11})
	c.ConfigSet(ctx, "hash-max-listpack-entries", "0")
	seed(appsim.Plan{Schema: "atlasmart", Count: 200, RandSeed: 12})
	c.ConfigSet(ctx, "hash-max-listpack-entries", "128")
	if ok, err := redistest.HasFieldTTL(c); err != nil {
		t.Fatal(err)
	} else if ok {
		seed(appsim.Plan{Schema: "atlasmart", Count: 200, RandSeed: 13, FieldTTL: true})
	}
	seedBranches(t, ctx, c)
	t.Run("atlasmart", func(t *testing.T) {
		if n := readPathsAgree(t, "--url", srv.URL(0), "--preset", "atlasmart", "--match", "atlasmart:*"); n < 600 {
			t.Errorf("read %d records, want the 600+ seeded", n)
		}
	})
	seed(appsim.Plan{Schema: "setnx", Count: 300, RandSeed: 14})
	c.Set(ctx, "idem:big-value", strings.Repeat("v", 300), time.Hour)
	c.Set(ctx, "idem:json", `{"status":"PROCESSING"}`, 0)
	t.Run("setnx", func(t *testing.T) {
		readPathsAgree(t, "--url", srv.URL(0), "--preset", "setnx", "--match", "idem:*")
	})
}

// seedBranches writes atlasmart-shaped records that take the read's rare
// branches.
func seedBranches(t *testing.T, ctx context.Context, c *redis.Client) {
	t.Helper()
	p := c.Pipeline()
	base := "atlasmart:ch23:idem:customer-9:POST:/orders:"
	p.HSet(ctx, base+"big-response", "state", "SUCCEEDED", "fingerprint", "fp", "status", 200, "response", strings.Repeat("r", 100<<10))
	p.HSet(ctx, base+"long-fp", "state", "PROCESSING", "fingerprint", strings.Repeat("f", 80<<10))
	p.HSet(ctx, base+"huge-fp", "state", "PROCESSING", "fingerprint", strings.Repeat("g", 2<<20))
	p.HSet(ctx, base+"no-ttl", "state", "PROCESSING", "fingerprint", "x")
	wide := []any{"state", "SUCCEEDED", "fingerprint", "w"}
	for i := range 400 {
		wide = append(wide, fmt.Sprint("extra", i), "v")
	}
	p.HSet(ctx, base+"wide", wide...)
	p.Expire(ctx, base+"wide", time.Hour)
	p.Set(ctx, base+"a-string", "x", time.Hour)
	p.RPush(ctx, base+"a-list", "x")
	p.HSet(ctx, base+"empty-state", "fingerprint", "y")
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}
