package main

import (
	"fmt"
	"io"
	"os/exec"
	"time"
)

// InstallHint tells how to get the external programs the harness drives.
const InstallHint = "the benchmark needs redis-server and redis-cli in PATH: install them with `apt-get install -y redis-server redis-tools` (Debian/Ubuntu) or run `bash .ci/test`"

// Seeding timings: long enough that nothing expires or turns stale while
// the harness runs (a 10M run takes about an hour: seeding alone took 6
// minutes on a busy machine, and a 10-minute timeout turned 94,217 fresh
// records stale before the check) and that a saved seed (-seed-cache)
// stays exact for hours (seedPlan(…).Stable(): 8 h 24 min); idemctl is
// told the same ones. They are the shared 10M server's too.
const (
	reserveTTL        = 48 * time.Hour
	processingTimeout = 12 * time.Hour
	retention         = 96 * time.Hour
	matchPattern      = "atlasmart:ch23:idem:*"
)

// The fixed throttle the production profile used before its latency
// budget, and the budget it uses now (config.example.yaml).
var (
	throttleArgs = []string{"--count", "500", "--keys-per-sec", "20000", "--pause", "5ms"}
	budgetArgs   = []string{"--max-latency", "1ms"}
)

// latencyBudget is budgetArgs' D, for the target.
const latencyBudget = time.Millisecond

// Config is one harness run.
type Config struct {
	N             int
	Rounds        int
	Smoke         bool
	Out           string
	Commit        string // what was measured (default: git describe --always --dirty)
	Idemctl       string // prebuilt binary; "" builds one from the module
	RSSSmallN     int    // smaller N for the RSS comparison (default N/10)
	ThrottledKeys int    // keys for the throttled load run (default min(N, 200000))
	LoadKeys      int    // keys for the unthrottled and latency-budget load runs (default min(N, 1000000))
	IdleProbe     time.Duration
	QuietCPU      float64       // wait until other processes use at most this many CPUs…
	QuietWait     time.Duration // …for at most this long before each timed run (0: don't wait)
	Load          bool
	TUI           bool
	Records       bool
	GoBench       bool
	Sampling      bool          // check stats --sample's intervals against the full scan
	SampleShare   string        // the share each sampled run reads
	SampleRuns    int           // sampled runs
	Snapshot      bool          // SAVE the keyspace, time stats --rdb against redis-check-rdb
	ServerCost    bool          // server CPU per key of each tool and read path (INFO cpu)
	Ledger        bool          // time idemctl ledgers on one big dedupe-ledger zset (ledger.go)
	Follow        bool          // the exporter following vs periodic passes beside the application (follow.go)
	FollowWindow  time.Duration // each mode's window (periodic: at least three passes)
	FollowRate    int           // the application simulator's requests/s
	LedgerMembers int           // its members
	Writes        bool          // measure a bulk guarded write run (audited writes/s)
	WriteKeys     int           // records it writes
	WriteDir      string        // where its audit log goes ("" the system's temp dir)
	Strict        bool
	Pin           bool      // load phases: the server on one CPU, the clients on the others
	SeedCache     string    // directory of saved seeds ("" none): load one instead of seeding, or save the seed
	Only          string    // comma-separated steps to run after seed and verify ("" every step that is on)
	Log           io.Writer // progress; nil: discarded
}

// DefaultConfig is the full run the issue asks for.
func DefaultConfig() Config {
	return Config{N: 1_000_000, Rounds: 3, IdleProbe: 3 * time.Second, QuietCPU: 0.15, QuietWait: 3 * time.Minute,
		Load: true, TUI: true, Records: true, GoBench: true, Writes: true, WriteKeys: 20_000,
		Sampling: true, SampleShare: "1%", SampleRuns: 20, Pin: true, Snapshot: true, ServerCost: true, LedgerMembers: TenM,
		Follow: true, FollowWindow: 2 * time.Minute, FollowRate: followRate}
}

// ApplySmoke shrinks the run for CI, keeping any value set explicitly.
func (c *Config) ApplySmoke(set map[string]bool) {
	c.Smoke = true
	c.IdleProbe = 500 * time.Millisecond
	for _, d := range []struct {
		flag  string
		apply func()
	}{
		{"n", func() { c.N = 20_000 }},
		{"rounds", func() { c.Rounds = 1 }},
		{"gobench", func() { c.GoBench = false }},
		{"write-keys", func() { c.WriteKeys = 2_000 }},
		{"ledger-members", func() { c.LedgerMembers = 200_000 }},
		{"sample-runs", func() { c.SampleRuns = 3 }},
		{"sample", func() { c.SampleShare = "20%" }}, // 1 % of 20,000 records is too few to say much
		{"quiet-wait", func() { c.QuietWait = 0 }},
		{"follow-window", func() { c.FollowWindow = 15 * time.Second }},
		{"follow-rate", func() { c.FollowRate = 500 }},
	} {
		if !set[d.flag] {
			d.apply()
		}
	}
}

func (c *Config) logf(format string, a ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, "bench: "+format+"\n", a...)
	}
}

// resolve checks cfg and the programs the harness drives, and fills in
// the counts left at zero.
func (c *Config) resolve() error {
	if c.N < 1 || c.Rounds < 1 || c.Writes && c.WriteKeys < 1 {
		return fmt.Errorf("-n, -rounds and -write-keys must be positive")
	}
	for _, bin := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(bin); err != nil {
			return fmt.Errorf("%s not found in PATH: %s", bin, InstallHint)
		}
	}
	if c.RSSSmallN <= 0 {
		c.RSSSmallN = c.N / 10
	}
	if c.ThrottledKeys <= 0 {
		c.ThrottledKeys = min(c.N, 200_000)
	}
	if c.LoadKeys <= 0 {
		c.LoadKeys = min(c.N, 1_000_000)
	}
	return nil
}
