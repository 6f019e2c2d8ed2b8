package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/internal/cli"
	"github.com/idemctl/idemctl/internal/clitest"
	"github.com/idemctl/idemctl/internal/redistest"
)

// runWithStderrTTY runs idemctl with stderr a terminal, cut off after limit.
func runWithStderrTTY(t *testing.T, limit time.Duration, args ...string) clitest.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var out, errb bytes.Buffer
	o := clitest.IO(t, nil, "", &out, &errb)
	o.StderrTTY = true
	code := cli.Run(ctx, o, args)
	return clitest.Result{Stdout: out.String(), Stderr: errb.String(), Code: code}
}

// On a terminal, stats keeps a progress line on stderr and wipes it before
// the report; --quiet, or stderr not a terminal, shows none; stdout (JSON
// here) never carries it.
func TestProgressLineOnATerminal(t *testing.T) {
	srv := redistest.Shared(t)
	clitest.Run(t, nil, "seed", "--url", srv.URL(0), "--count", "3000").MustCode(t, 0)
	base := []string{"stats", "--url", srv.URL(0), "--preset", "atlasmart", "-o", "json", "--count", "100", "--keys-per-sec", "10000"}

	r := runWithStderrTTY(t, time.Minute, base...)
	r.MustCode(t, cli.ExitOK)
	if !strings.Contains(r.Stderr, "\r\x1b[Kstats ") || !strings.Contains(r.Stderr, "% · ") || !strings.Contains(r.Stderr, " records · ") ||
		!strings.HasSuffix(r.Stderr, "\r\x1b[K") {
		t.Fatalf("progress line: %q", r.Stderr)
	}
	if strings.Contains(r.Stdout, "\x1b") || !json.Valid([]byte(r.Stdout)) {
		t.Fatalf("the progress line reached stdout: %q", r.Stdout)
	}
	if q := runWithStderrTTY(t, time.Minute, append(base, "--quiet")...); q.Code != 0 || q.Stderr != "" {
		t.Fatalf("--quiet: exit %d, stderr %q", q.Code, q.Stderr)
	}
	if p := clitest.Run(t, nil, base...); p.Code != 0 || p.Stderr != "" {
		t.Fatalf("stderr not a terminal: exit %d, stderr %q", p.Code, p.Stderr)
	}
}

// Ctrl-C in the middle: stats and check print what they read, marked
// incomplete with the share covered, and exit 3.
func TestInterruptedStatsAndCheckReportWhatTheyRead(t *testing.T) {
	srv := redistest.Shared(t)
	clitest.Run(t, nil, "seed", "--url", srv.URL(0), "--count", "5000").MustCode(t, 0)
	slow := []string{"--url", srv.URL(0), "--preset", "atlasmart", "--count", "50", "--keys-per-sec", "1000", "--quiet"}

	r := runWithStderrTTY(t, 1500*time.Millisecond, append([]string{"stats", "-o", "json"}, slow...)...)
	r.MustCode(t, cli.ExitIncomplete)
	var rep struct {
		Total    int64   `json:"total"`
		Complete bool    `json:"complete"`
		Covered  float64 `json:"covered"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("stats printed no report: %v %q", err, r.Stdout)
	}
	if rep.Complete || rep.Covered <= 0 || rep.Covered >= 0.9 || rep.Total == 0 || !strings.Contains(r.Stderr, "interrupted after") {
		t.Fatalf("interrupted stats: %+v, stderr %q", rep, r.Stderr)
	}

	c := runWithStderrTTY(t, 1500*time.Millisecond, append([]string{"check", "--max-stale", "100000"}, slow...)...)
	c.MustCode(t, cli.ExitIncomplete)
	if !strings.HasPrefix(c.Stdout, "INCOMPLETE: interrupted after ") || !strings.Contains(c.Stdout, "% of the keyspace") {
		t.Fatalf("interrupted check: %q %q", c.Stdout, c.Stderr)
	}
}

// seed shows its progress too, and Ctrl-C reports what it wrote.
func TestSeedProgressAndInterrupt(t *testing.T) {
	srv := redistest.Shared(t)
	// Ctrl-C as soon as the progress line first shows: after a batch.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	errb := &clitest.Buffer{OnFirstWrite: cancel}
	o := clitest.IO(t, nil, "", &out, errb)
	o.StderrTTY = true
	code := cli.Run(ctx, o, []string{"seed", "--url", srv.URL(0), "--count", "2000000"})
	r := clitest.Result{Stdout: out.String(), Stderr: errb.String(), Code: code}
	r.MustCode(t, cli.ExitInterrupt)
	var res struct{ Count, Written int }
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil {
		t.Fatalf("seed printed nothing on Ctrl-C: %v %q", err, r.Stdout)
	}
	c := srv.Client(0)
	defer c.Close()
	n, _ := c.DBSize(context.Background()).Result()
	if res.Count != 2000000 || res.Written <= 0 || res.Written >= res.Count || n < int64(res.Written) ||
		!strings.Contains(r.Stderr, "interrupted after writing ") || !strings.Contains(r.Stderr, "\r\x1b[Kseed ") {
		t.Fatalf("interrupted seed: %+v (%d keys in Redis), stderr %q", res, n, r.Stderr)
	}
}
