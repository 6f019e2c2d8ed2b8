package clitest

import (
	"encoding/json"
	"slices"
	"strconv"
	"testing"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// Seed writes count records to url with idemctl seed and any further seed
// flags (timings, preset), fails the test unless seed exits 0, and returns
// what seed says it wrote. Without --reserve-ttl it passes the preset's
// own: seed's default is longer (its stale records outlive a newcomer's
// walkthrough), and the tests judge the records with the preset's
// timings, as a scan without --reserve-ttl does.
func Seed(t testing.TB, url string, count int, flags ...string) SeedOut {
	t.Helper()
	if !slices.Contains(flags, "--reserve-ttl") {
		preset := "atlasmart"
		if i := slices.Index(flags, "--preset"); i >= 0 && i+1 < len(flags) {
			preset = flags[i+1]
		}
		if s, err := inspect.Preset(preset); err == nil {
			flags = append(flags, "--reserve-ttl", s.Defaults.ReserveTTL.D().String())
		}
	}
	r := Run(t, nil, append([]string{"seed", "--url", url, "--count", strconv.Itoa(count)}, flags...)...)
	r.MustCode(t, 0)
	var so SeedOut
	if err := json.Unmarshal([]byte(r.Stdout), &so); err != nil {
		t.Fatalf("seed output: %v\n%s", err, r.Stdout)
	}
	return so
}

// SeededURL is the opener of most command tests: the package's shared
// server, flushed, seeded by Seed; it returns that server's database-0 URL.
func SeededURL(t testing.TB, count int, flags ...string) string {
	t.Helper()
	url := redistest.Shared(t).URL(0)
	Seed(t, url, count, flags...)
	return url
}
