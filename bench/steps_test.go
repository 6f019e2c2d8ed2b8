package main

import (
	"strings"
	"testing"
	"time"
)

// -only names steps; seed, verify and the cache always run, and a typo is
// an error that lists the steps.
func TestParseOnly(t *testing.T) {
	got, err := parseOnly(" rounds, load,verify ")
	if err != nil || len(got) != 2 || !got["rounds"] || !got["load"] {
		t.Fatalf("parseOnly = %v, %v", got, err)
	}
	if got, err := parseOnly(""); got != nil || err != nil {
		t.Errorf("empty -only = %v, %v; want every step", got, err)
	}
	if got, err := parseOnly("verify"); got == nil || len(got) != 0 || err != nil {
		t.Errorf("-only verify = %v, %v; want no optional step", got, err)
	}
	if _, err := parseOnly("rounds,tiu"); err == nil || !strings.Contains(err.Error(), `"tiu"`) || !strings.Contains(err.Error(), "sampling") {
		t.Errorf("typo: %v", err)
	}
}

// The estimate before a 10M run: seeding or loading, each step in order,
// and the worst wait for quiet (one full wait, then short ones).
func TestEstimate(t *testing.T) {
	cfg := DefaultConfig()
	cfg.N, cfg.Rounds, cfg.RSSSmallN, cfg.ThrottledKeys, cfg.LoadKeys = TenM, 1, TenM/10, 200_000, 1_000_000
	only, _ := parseOnly("rounds,rss")
	on := func(s string) bool { return always[s] || only[s] }
	fresh, waits := estimate(cfg, false, on)
	var names []string
	var total time.Duration
	for _, s := range fresh {
		names = append(names, s.Step)
		total += s.Estimate
	}
	if strings.Join(names, ",") != "seed,verify,cache,rounds,rss" || waits != 7 {
		t.Fatalf("steps %v, %d waits", names, waits)
	}
	// 10M, as measured on a busy 2-CPU VM: seeding 9.5 min, verify 7,
	// saving 1.5, one round of the five variants 14.5, RSS at 1M 1.
	if total < 30*time.Minute || total > 40*time.Minute {
		t.Errorf("10M estimate %v, want about 34 min", total)
	}
	cached, _ := estimate(cfg, true, on)
	if cached[0].Step != "seed" || cached[0].Estimate > 2*time.Minute || cached[2].Step != "rounds" {
		t.Errorf("from the cache: %+v", cached)
	}
	line := estimateLine(fresh, waits, 3*time.Minute, busyQuietWait)
	for _, want := range []string{"about 34m0s", "seed 10m0s", "rounds 15m0s", "7 timed runs can add up to 5m0s"} {
		if !strings.Contains(line, want) {
			t.Errorf("estimate line lacks %q: %s", want, line)
		}
	}
}

// A disturbed sample is redone only while short; once a wait for quiet
// runs out, later waits are short.
func TestQuietBounds(t *testing.T) {
	h := &harness{cfg: Config{QuietWait: 3 * time.Minute, QuietCPU: 0.15}, res: &Results{}}
	noisy := Sample{Wall: 10 * time.Second, OtherCPU: 5 * time.Second}
	if !h.redo(noisy, 0) || h.redo(noisy, maxRetries) {
		t.Error("a short noisy sample: redone until the retries run out")
	}
	if h.redo(Sample{Wall: 10 * time.Second, OtherCPU: time.Second}, 0) {
		t.Error("a quiet sample redone")
	}
	if long := (Sample{Wall: 3 * time.Minute, OtherCPU: 90 * time.Second}); h.redo(long, 0) {
		t.Error("a 3-minute sample redone")
	}
	if h.quietLimit() != 3*time.Minute {
		t.Errorf("first wait %v", h.quietLimit())
	}
	h.res.NotQuiet++
	if h.quietLimit() != busyQuietWait {
		t.Errorf("after a wait ran out: %v", h.quietLimit())
	}
}
