package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/internal/clitest"
	"github.com/idemctl/idemctl/internal/redistest"
)

// detect on node-idempotency records mixed with junk strings under one
// pattern: it names the mix, and never proposes a preset whose key
// template fits none of the sampled keys.
func TestDetectMixedFormats(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	ctx := context.Background()
	for i := range 21 {
		c.Set(ctx, fmt.Sprintf("node-idempotency:POST:/orders:k%d", i), `{"status":"IN_PROGRESS","fingerPrint":"aa11"}`, time.Hour)
	}
	for i := range 7 {
		c.Set(ctx, fmt.Sprintf("node-idempotency:junk%d", i), "junk value", time.Hour)
	}
	r := clitest.Run(t, nil, "detect", "--url", srv.URL(0), "--match", "node-idempotency:*", "-o", "json")
	r.MustCode(t, 0)
	var det struct {
		Best *struct {
			Preset   string
			Template int
		} `json:"best"`
		Mixed []string `json:"mixed"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &det); err != nil {
		t.Fatal(err)
	}
	if det.Best == nil || det.Best.Preset != "node-idempotency" {
		t.Fatalf("want node-idempotency proposed:\n%s", r.Stdout)
	}
	mixed := strings.Join(det.Mixed, "; ")
	if !strings.Contains(mixed, "7 of 28 sampled keys are not node-idempotency records") || strings.Contains(mixed, "setnx") {
		t.Fatalf("the mix is not named, or named through a preset whose template fits none: %q", mixed)
	}
	text := clitest.Run(t, nil, "detect", "--url", srv.URL(0), "--match", "node-idempotency:*")
	if !strings.Contains(text.Stdout, "mixed formats: 7 of 28 sampled keys") {
		t.Fatalf("text output does not name the mix:\n%s", text.Stdout)
	}
}
