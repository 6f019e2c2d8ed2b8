// Command bench measures idemctl side by side with a minimal baseline client
// and redis-cli, on its own redis-server holding N seeded records:
//
//	go run ./bench                          # N = 1,000,000, 3 rounds (several minutes)
//	go run ./bench -n 100000 -rounds 3
//	go run ./bench -smoke                   # N = 20,000, 1 round: what CI runs
//	go run ./bench -out bench/results/1m.md # also write the report (.json: JSON)
//	go run ./bench -n 10000000 -seed-cache /var/tmp/idemctl-seeds -only rounds,rss
//
// It builds idemctl from this module, starts redis-server on a free loopback
// port, seeds the lesson's hash records with appsim.Seed, then times in
// alternation, round after round: (a) a baseline client (SCAN + one
// pipeline of HMGET/PTTL/MEMORY USAGE per batch, no decoding, no output),
// (b) idemctl scan --output ndjson >/dev/null, (c) idemctl stats --output
// json, (d) redis-cli --memkeys, (e) redis-cli --scan | wc -l. It reports
// medians, keys/s, idemctl's peak RSS, the ratios, the RSS of scan and stats
// at N/10 beside N, the latency another client sees while idemctl scans
// (unthrottled and throttled), the TUI's time to first rows, the heap cost
// of held records, and the Go micro-benchmarks, each against its target.
//
// Floor 6 of ARCHITECTURE.md, a program: it may import any floor below it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

func main() {
	if addr := os.Getenv(baselineChildEnv); addr != "" { // the harness's own child
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := baselineChild(ctx, addr, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	cfg := DefaultConfig()
	flag.IntVar(&cfg.N, "n", cfg.N, "records to seed")
	flag.IntVar(&cfg.Rounds, "rounds", cfg.Rounds, "timed rounds of the five variants (medians are reported)")
	smoke := flag.Bool("smoke", false, "small and quick (N=20000, 1 round, short load phases, no Go benchmarks): checks the harness works")
	flag.StringVar(&cfg.Out, "out", "", "also write the report to this file (.json: JSON, otherwise markdown)")
	flag.StringVar(&cfg.Idemctl, "idemctl", "", "use this idemctl binary instead of building one")
	flag.StringVar(&cfg.Commit, "commit", "", "label of what is measured (default: git describe --always --dirty)")
	flag.IntVar(&cfg.RSSSmallN, "rss-n", 0, "the smaller record count for the RSS comparison (default N/10, via --max-keys)")
	flag.IntVar(&cfg.ThrottledKeys, "throttled-keys", 0, "keys the throttled load run scans (default min(N, 200000))")
	flag.IntVar(&cfg.LoadKeys, "load-keys", 0, "keys the unthrottled and latency-budget load runs scan (default min(N, 1000000))")
	flag.Float64Var(&cfg.QuietCPU, "quiet-cpu", cfg.QuietCPU, "before each timed run, wait until other processes use at most this many CPUs")
	flag.DurationVar(&cfg.QuietWait, "quiet-wait", cfg.QuietWait, "wait at most this long for quiet before each timed run (0: don't wait; smoke: 0)")
	flag.BoolVar(&cfg.Load, "load", cfg.Load, "measure the latency another client sees while idemctl scans")
	flag.BoolVar(&cfg.TUI, "tui", cfg.TUI, "measure the TUI's time to first rows (needs tmux)")
	flag.BoolVar(&cfg.Records, "records", cfg.Records, "measure the heap cost of held records (in-process ScanAll)")
	flag.BoolVar(&cfg.GoBench, "gobench", cfg.GoBench, "run the Go benchmarks of ./inspect and ./ui")
	flag.BoolVar(&cfg.ServerCost, "servercost", cfg.ServerCost, "server CPU per key (INFO cpu) of scan, stats by each read path, redis-cli --memkeys and --bigkeys, and the baseline, with another client's PING p99")
	flag.BoolVar(&cfg.Snapshot, "snapshot", cfg.Snapshot, "SAVE the keyspace and time stats --rdb on the dump against redis-check-rdb (records/s, peak RSS)")
	flag.BoolVar(&cfg.Writes, "writes", cfg.Writes, "measure audited writes/s of a bulk guarded write (idemctl fail over fresh records), last")
	flag.BoolVar(&cfg.Ledger, "ledger", cfg.Ledger, "time idemctl ledgers on one dedupe-ledger zset of -ledger-members members (built server-side), with the commands it sends")
	flag.BoolVar(&cfg.Follow, "follow", cfg.Follow, "the exporter following the keyspace (--follow) vs periodic passes at the default interval, beside the application simulator writing -follow-rate requests/s: stale latency, server CPU, the application's p99")
	flag.DurationVar(&cfg.FollowWindow, "follow-window", cfg.FollowWindow, "each follow mode's measuring window (periodic: at least three passes; smoke: 15s)")
	flag.IntVar(&cfg.FollowRate, "follow-rate", cfg.FollowRate, "the application simulator's requests/s in the follow step (smoke: 500)")
	flag.IntVar(&cfg.LedgerMembers, "ledger-members", cfg.LedgerMembers, "members of the ledger step's zset (smoke: 200000)")
	flag.IntVar(&cfg.WriteKeys, "write-keys", cfg.WriteKeys, "records the bulk write run writes (smoke: 2000)")
	flag.StringVar(&cfg.WriteDir, "write-dir", "", "directory for that run's audit log: a real disk, not tmpfs (default: the system's temp dir; the report names its filesystem)")
	flag.BoolVar(&cfg.Sampling, "sampling", cfg.Sampling, "check stats --sample's 95% intervals against the full scan over repeated runs")
	flag.StringVar(&cfg.SampleShare, "sample", cfg.SampleShare, "the share each sampled run reads (smoke: 20%)")
	flag.IntVar(&cfg.SampleRuns, "sample-runs", cfg.SampleRuns, "sampled runs (smoke: 3)")
	flag.BoolVar(&cfg.Pin, "pin", cfg.Pin, "while the load phases run, keep redis-server alone on the first CPU and the harness (its latency probe) and every measured client on the others, as if the clients ran on another host (Linux, 2+ CPUs)")
	flag.BoolVar(&cfg.Strict, "strict", false, "exit 1 when a target is missed")
	flag.StringVar(&cfg.SeedCache, "seed-cache", "", "keep the seeded keyspace in this directory (an RDB file named for N, the seed's parameters and the server's version, and its expected counts) and load it instead of seeding when a later run matches; refused, and replaced, once older than its records stay as seeded")
	flag.StringVar(&cfg.Only, "only", "", "run only these steps after seeding and verifying, comma-separated: "+strings.Join(selectable, ","))
	server := flag.String("server", "", "the server to measure on: a redis-server or valkey-server binary, possibly inside a folder unpacked with mmdebstrap (default: redis-server from PATH; same as "+redistest.ServerEnv+")")
	flag.Parse()
	if *server != "" {
		os.Setenv(redistest.ServerEnv, *server) // read by redistest when it starts the server
	}
	if *smoke {
		set := map[string]bool{}
		flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
		cfg.ApplySmoke(set)
	}
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "bench: unexpected argument %q\n", flag.Arg(0))
		os.Exit(2)
	}
	cfg.Log = os.Stderr

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := Run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	fmt.Print(res.Markdown())
	if cfg.Out != "" {
		if err := res.WriteFile(cfg.Out); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		fmt.Fprintln(os.Stderr, "bench: wrote", cfg.Out)
	}
	if cfg.Strict && !res.AllMet() {
		os.Exit(1)
	}
}
