package cli_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/cli"
	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// With seed's defaults the stale records outlive a newcomer's walkthrough:
// each has MinStaleLife (30 minutes) of TTL at least, on the server; seed
// says when they expire and the reserve TTL to judge them by, and a scan
// given it finds every one stale. seed --help says how long records live
// and which flags change it.
func TestSeedDefaultsLeaveTimeForTheWalkthrough(t *testing.T) {
	for _, preset := range []string{"atlasmart", "setnx"} {
		t.Run(preset, func(t *testing.T) {
			srv, c := redistest.SharedClient(t)
			url := srv.URL(0)
			r := clitest.Run(t, nil, "seed", "--url", url, "--preset", preset)
			r.MustCode(t, cli.ExitOK)
			var res appsim.Result
			if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil {
				t.Fatalf("seed output: %v\n%s", err, r.Stdout)
			}
			stale := res.Kinds[appsim.KindStale]
			if stale == 0 {
				t.Fatal("seed wrote no stale record")
			}
			reserve := time.Duration(res.ReserveTTLMs) * time.Millisecond
			if !strings.Contains(r.Stderr, "stale records, expiring ") {
				t.Errorf("seed does not say when the stale records expire: %q", r.Stderr)
			}
			if preset == "atlasmart" && !strings.Contains(r.Stderr, "--reserve-ttl 1h, or reserve_ttl: 1h in the keyspace") {
				t.Errorf("seed does not name the reserve TTL to judge by: %q", r.Stderr)
			}

			// A 4m timeout: the stale records (6 minutes old or more) are
			// stale by it, and no fresh one turns stale while a slow run
			// lasts.
			r = clitest.Run(t, nil, "scan", "--url", url, "--preset", preset, "--reserve-ttl", reserve.String(), "--processing-timeout", "4m",
				"--stale", "-o", "ndjson")
			r.MustCode(t, cli.ExitOK)
			lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
			if int64(len(lines)) != stale {
				t.Fatalf("scan --stale found %d records, seed wrote %d stale", len(lines), stale)
			}
			for _, l := range lines {
				var rec struct{ Key string }
				if err := json.Unmarshal([]byte(l), &rec); err != nil {
					t.Fatal(err)
				}
				if ttl := c.PTTL(t.Context(), rec.Key).Val(); ttl < appsim.MinStaleLife {
					t.Fatalf("stale record %s has %v to live, want %v at least", rec.Key, ttl, appsim.MinStaleLife)
				}
			}
		})
	}
	r := clitest.Run(t, nil, "seed", "--help")
	r.MustCode(t, cli.ExitOK)
	for _, want := range []string{"How long the records live", "30 minutes or more", "--reserve-ttl, --processing-timeout and --retention change these",
		"reserve_ttl: 1h in the keyspace"} {
		if !strings.Contains(strings.Join(strings.Fields(r.Stdout), " "), want) {
			t.Errorf("seed --help does not say %q:\n%s", want, r.Stdout)
		}
	}
}
