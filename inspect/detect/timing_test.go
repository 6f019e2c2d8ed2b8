package detect

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// detect proposes reserve_ttl, processing_timeout and retention from the
// sampled TTLs, beside the preset's defaults, and says when the sample
// cannot support one.
func TestDetectProposesTiming(t *testing.T) {
	_, c := redistest.SharedClient(t)
	ctx := t.Context()
	write := func(state string, ttl time.Duration, n int) {
		for i := range n {
			key := fmt.Sprintf("atlasmart:ch23:idem:customer-%d:POST:/orders:%s-%d", i, state, i)
			c.HSet(ctx, key, "state", state, "fingerprint", "fp")
			c.PExpire(ctx, key, ttl-time.Duration(i)*time.Minute) // reserved i minutes ago
		}
	}
	write("PROCESSING", 6*time.Hour-2*time.Second, 9)
	write("SUCCEEDED", 24*time.Hour-5*time.Second, 6)
	res, err := Detect(ctx, c, "atlasmart:*", 200)
	if err != nil || res.Best == nil || res.Best.Preset != "atlasmart" {
		t.Fatalf("%v %+v", err, res.Best)
	}
	got := map[string]Proposal{}
	for _, p := range res.Timing {
		got[p.Setting] = p
	}
	// ages 0–8 min (+2 s) under 6h: median 4m02s, three times that rounded up
	if got["reserve_ttl"].Value != "6h" || got["reserve_ttl"].Default != "1m" || got["retention"].Value != "24h" ||
		got["processing_timeout"].Value != "13m" || !strings.Contains(got["processing_timeout"].Evidence, "median age (4m") {
		t.Fatalf("%+v", res.Timing)
	}
	if !strings.Contains(res.YAML, "    reserve_ttl: 6h # preset default 1m\n") {
		t.Errorf("yaml:\n%s", res.YAML)
	}

	// Too few in flight: said, not guessed.
	c.FlushAll(ctx)
	write("PROCESSING", time.Hour, 2)
	write("SUCCEEDED", time.Hour, 6)
	res, err = Detect(ctx, c, "atlasmart:*", 200)
	if err != nil || len(res.Timing) != 3 || res.Timing[0].Value != "" || !strings.HasPrefix(res.Timing[0].Evidence, "not proposed: 2 processing records") ||
		res.Timing[1].Value != "" || strings.Contains(res.YAML, "reserve_ttl") {
		t.Fatalf("%v %+v\n%s", err, res.Timing, res.YAML)
	}
}
