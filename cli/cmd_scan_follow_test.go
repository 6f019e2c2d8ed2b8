package cli_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// scan --follow streams the first pass, then each change as it happens:
// a record reserved, completed, deleted, each one line.
func TestScanFollowStreamsChanges(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	ctx := context.Background()
	key := appsim.OrderKey("customer-1", "follow-1")
	if err := appsim.Reserve.Run(ctx, c, []string{"atlasmart:ch23:idem:customer-1:POST:/orders:before"}, "fp0", 60).Err(); err != nil {
		t.Fatal(err)
	}
	b := clitest.Start(t, "scan", "--url", srv.URL(0), "--preset", "atlasmart", "-o", "ndjson", "--follow")
	waitLine(t, b, `"event":"resync-done"`)
	if !strings.Contains(b.Stdout.String(), `"event":"mode","mode":"tracking"`) {
		t.Fatalf("no tracking mode line:\n%s", b.Stdout.String())
	}
	if err := appsim.Reserve.Run(ctx, c, []string{key}, "fp1", 60).Err(); err != nil {
		t.Fatal(err)
	}
	waitLine(t, b, `"state":"processing"`, key)
	if err := appsim.Complete.Run(ctx, c, []string{key}, "fp1", 201, "{}", 300).Err(); err != nil {
		t.Fatal(err)
	}
	waitLine(t, b, `"state":"succeeded"`, key)
	c.Del(ctx, key)
	waitLine(t, b, `"event":"remove"`, key)
	r := b.Stop(t)
	r.MustCode(t, 130)
}

// waitLine waits for a line of stdout holding every one of parts.
func waitLine(t *testing.T, b *clitest.Background, parts ...string) {
	t.Helper()
	end := time.Now().Add(10 * time.Second)
	for time.Now().Before(end) {
		for _, l := range strings.Split(b.Stdout.String(), "\n") {
			ok := true
			for _, p := range parts {
				ok = ok && strings.Contains(l, p)
			}
			if ok {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no line with %q within 10s:\n%s\nstderr: %s", parts, b.Stdout.String(), b.Stderr.String())
}

func TestScanFollowNeedsNDJSON(t *testing.T) {
	r := clitest.Run(t, nil, "scan", "--url", "redis://127.0.0.1:1/0", "--preset", "atlasmart", "-o", "json", "--follow")
	r.MustCode(t, 2)
	r.OneLineErr(t)
	if !strings.Contains(r.Stderr, "-o ndjson") {
		t.Fatalf("stderr %q", r.Stderr)
	}
}
