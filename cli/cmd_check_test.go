package cli_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/cli"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// seedForCheck writes 1,000 records: 80 stale, 20 processing without TTL (so
// 20 without TTL), none unknown; the oldest processing record is 15–30 min old.
func seedForCheck(t *testing.T, url string) []string {
	t.Helper()
	clitest.Seed(t, url, 1000, exporterTiming...)
	return append([]string{"check", "--url", url, "--preset", "atlasmart"}, exporterTiming...)
}

// verdict checks the one-line verdict and the exit code.
func verdict(t *testing.T, r clitest.Result, code int, prefix string) {
	t.Helper()
	r.MustCode(t, code)
	if lines := strings.Split(strings.TrimRight(r.Stdout, "\n"), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], prefix) {
		t.Errorf("want one line starting %q, got %q", prefix, r.Stdout)
	}
	// Said once: on stdout, never repeated on stderr.
	if r.Stderr != "" {
		t.Errorf("the verdict is repeated on stderr: %q", r.Stderr)
	}
}

func TestCheckEachThreshold(t *testing.T) {
	srv := redistest.Shared(t)
	base := seedForCheck(t, srv.URL(0))
	cases := []struct {
		flag, crossed, held string
	}{
		{"--max-stale", "79", "80"},
		{"--max-processing-no-ttl", "19", "20"},
		{"--max-no-ttl", "0", "20"},
		{"--max-oldest-processing", "14m", "31m"},
		{"--max-memory", "1KiB", "1GiB"},
	}
	for _, c := range cases {
		t.Run(strings.TrimPrefix(c.flag, "--"), func(t *testing.T) {
			name := strings.ReplaceAll(strings.TrimPrefix(strings.TrimPrefix(c.flag, "--max-"), "--"), "-", "_")
			r := clitest.Run(t, nil, append(append([]string{}, base...), c.flag, c.crossed)...)
			verdict(t, r, cli.ExitThreshold, "FAIL: "+name+" ")
			if !strings.Contains(r.Stdout, name+" ") || !strings.Contains(r.Stdout, " > ") {
				t.Errorf("the verdict does not say what crossed: %q", r.Stdout)
			}
			r = clitest.Run(t, nil, append(append([]string{}, base...), c.flag, c.held)...)
			if name != "stale" && name != "oldest_processing" {
				verdict(t, r, cli.ExitOK, "OK: "+name+" ")
				return
			}
			// The 20 processing records without TTL have no age: an age
			// verdict cannot be backed until their own threshold judges them.
			verdict(t, r, cli.ExitUnjudged, "CANNOT JUDGE: cannot judge 20 processing records in atlasmart: they have no TTL")
			r = clitest.Run(t, nil, append(append([]string{}, base...), c.flag, c.held, "--max-processing-no-ttl", "20")...)
			verdict(t, r, cli.ExitOK, "OK: ")
			if !strings.Contains(r.Stdout, name+" ") {
				t.Errorf("the verdict does not name %s: %q", name, r.Stdout)
			}
		})
	}

	// The example: the seeded stale and no-TTL records fail it.
	r := clitest.Run(t, nil, append(base, "--max-stale", "0", "--max-processing-no-ttl", "0", "--max-oldest-processing", "5m")...)
	verdict(t, r, cli.ExitThreshold, "FAIL: stale 80 > 0, processing_no_ttl 20 > 0, oldest_processing ")

	r = clitest.Run(t, nil, append(base, "--max-unknown-state", "0", "--max-stale", "1000", "--max-processing-no-ttl", "20", "-o", "json")...)
	r.MustCode(t, cli.ExitOK)
	var out struct {
		Verdict    string `json:"verdict"`
		Complete   bool   `json:"complete"`
		Records    int64  `json:"records"`
		Thresholds []struct {
			Name    string `json:"name"`
			Value   int64  `json:"value"`
			Crossed bool   `json:"crossed"`
		} `json:"thresholds"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil || out.Verdict != "ok" || !out.Complete || out.Records != 1000 ||
		len(out.Thresholds) != 3 || out.Thresholds[0].Name != "stale" || out.Thresholds[0].Value != 80 || out.Thresholds[0].Crossed {
		t.Fatalf("json: %v %+v", err, out)
	}

	// One record whose state maps to nothing crosses --max-unknown-state 0.
	c := srv.Client(0)
	defer c.Close()
	c.HSet(t.Context(), "atlasmart:ch23:idem:customer-9:POST:/orders:odd", "state", "HALF_DONE", "fingerprint", "x")
	r = clitest.Run(t, nil, append(base, "--max-unknown-state", "0")...)
	verdict(t, r, cli.ExitThreshold, "FAIL: unknown_state 1 > 0")
}

// A check must never pass on a scan that did not see everything.
func TestCheckIncompleteScan(t *testing.T) {
	srv := redistest.Shared(t)
	base := seedForCheck(t, srv.URL(0))
	r := clitest.Run(t, nil, append(base, "--max-stale", "1000", "--max-keys", "100")...)
	verdict(t, r, cli.ExitIncomplete, "INCOMPLETE: ")
	if !strings.Contains(r.Stdout, "--max-keys") {
		t.Errorf("verdict should say why: %q", r.Stdout)
	}
	// What a partial scan already found only grows with the rest: crossed for certain.
	r = clitest.Run(t, nil, append(base, "--max-stale", "0", "--max-keys", "500")...)
	verdict(t, r, cli.ExitThreshold, "FAIL: stale ")
	if !strings.Contains(r.Stdout, "INCOMPLETE") {
		t.Errorf("verdict should say the scan was incomplete: %q", r.Stdout)
	}
}

func TestCheckServerDiesMidScan(t *testing.T) {
	own := redistest.Own(t)
	clitest.Seed(t, own.URL(0), 20000, exporterTiming...)
	go func() {
		time.Sleep(300 * time.Millisecond)
		own.Stop()
	}()
	r := clitest.Run(t, nil, append([]string{"check", "--url", own.URL(0), "--preset", "atlasmart", "--max-stale", "100000",
		"--count", "100", "--keys-per-sec", "10000", "--dial-timeout", "1s", "--read-timeout", "1s"}, exporterTiming...)...)
	verdict(t, r, cli.ExitIncomplete, "INCOMPLETE: ")

	// Unreachable from the start: a connection error, as for every command.
	r = clitest.Run(t, nil, "check", "--url", own.URL(0), "--preset", "atlasmart", "--max-stale", "0", "--dial-timeout", "1s")
	r.MustCode(t, cli.ExitError)
	r.OneLineErr(t)
}

func TestCheckUsage(t *testing.T) {
	srv := redistest.Shared(t)
	base := []string{"check", "--url", srv.URL(0), "--preset", "atlasmart"}
	for _, bad := range [][]string{{}, {"--max-stale", "-1"}, {"--max-stale", "0", "-o", "xml"}, {"--max-oldest-processing", "soon"}, {"--max-stale", "0", "x"}} {
		r := clitest.Run(t, nil, append(append([]string{}, base...), bad...)...)
		r.MustCode(t, cli.ExitUsage)
		r.OneLineErr(t)
	}
	r := clitest.Run(t, nil, "check", "--help")
	r.MustCode(t, 0)
	for _, f := range []string{"--max-stale", "--max-processing-no-ttl", "--max-no-ttl", "--max-oldest-processing", "--max-unknown-state", "--max-memory", "--output"} {
		if !strings.Contains(r.Stdout, f) {
			t.Errorf("check --help lacks %s", f)
		}
	}
	// An empty keyspace passes: nothing is stuck.
	verdict(t, clitest.Run(t, nil, append(base, "--max-stale", "0")...), cli.ExitOK, "OK: stale 0 <= 0 — 0 records")
}

// check --sample judges the 95% intervals: crossed for sure, held for
// sure, or, when the interval straddles the limit (or, for the oldest age,
// the sample cannot rule it out), "cannot tell" with exit 3.
func TestCheckSample(t *testing.T) {
	url := clitest.SeededURL(t, 20000, "--reserve-ttl", "1h", "--processing-timeout", "10m")
	base := []string{"check", "--url", url, "--preset", "atlasmart", "--reserve-ttl", "1h", "--processing-timeout", "10m", "--sample", "20%"}

	r := clitest.Run(t, nil, append(base, "--max-processing-no-ttl", "0")...)
	verdict(t, r, cli.ExitThreshold, "FAIL: processing_no_ttl ≈")
	if !strings.Contains(r.Stdout, "estimated from a ") || !strings.Contains(r.Stdout, "] > 0") {
		t.Errorf("a sampled FAIL shows its interval and the sample: %s", r.Stdout)
	}
	verdict(t, clitest.Run(t, nil, append(base, "--max-processing-no-ttl", "1000000", "--max-no-ttl", "1000000")...), cli.ExitOK, "OK: processing_no_ttl ≈")
	verdict(t, clitest.Run(t, nil, append(base, "--max-processing-no-ttl", "1000000", "--max-oldest-processing", "100h")...),
		cli.ExitIncomplete, "CANNOT TELL from the sample: oldest_processing ")
	clitest.Run(t, nil, append(base[:len(base)-1], "0", "--max-stale", "0")...).MustCode(t, cli.ExitUsage)
}
