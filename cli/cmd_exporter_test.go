package cli_test

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/redis/go-redis/v9"
	"go.yaml.in/yaml/v3"

	"github.com/idemctl/idemctl/cli"
	"github.com/idemctl/idemctl/exporter"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/promtest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
	"github.com/idemctl/idemctl/reaper"
)

// waitHealthy polls /healthz until it answers 200.
func waitHealthy(t *testing.T, b *clitest.Background, addr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if code, ok := b.Exited(); ok {
			t.Fatalf("exporter exited %d: %s", code, b.Stderr.String())
		}
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("/healthz not 200 within 30s; stderr: %s", b.Stderr.String())
}

func freeAddr(t *testing.T) string {
	t.Helper()
	port, err := redistest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return "127.0.0.1:" + strconv.Itoa(port)
}

var exporterTiming = []string{"--reserve-ttl", "1h", "--processing-timeout", "10m"}

// startExporter runs `idemctl exporter` on a free port and waits for its
// first complete scan.
func startExporter(t *testing.T, url string, extra ...string) (*clitest.Background, string) {
	t.Helper()
	addr := freeAddr(t)
	args := append([]string{"exporter", "--url", url, "--preset", "atlasmart", "--listen", addr}, exporterTiming...)
	b := clitest.Start(t, append(args, extra...)...)
	waitHealthy(t, b, addr)
	return b, addr
}

// The "done when": a seeded redis-server, the exporter's /metrics
// scraped over HTTP, every value compared with what was seeded.
func TestExporterMetricsMatchSeed(t *testing.T) {
	srv := redistest.Shared(t)
	url := srv.URL(0)
	so := clitest.Seed(t, url, 5000, exporterTiming...)
	b, addr := startExporter(t, url, "--interval", "1m")
	m := promtest.Scrape(t, "http://"+addr+"/metrics")
	ks := "keyspace=atlasmart"
	want := map[string]float64{
		"idemctl_stale_records{" + ks + "}":                  float64(so.Expected.Stale),
		"idemctl_no_ttl_records{" + ks + "}":                 float64(so.Expected.Flags["no_ttl"]),
		"idemctl_processing_no_ttl_records{" + ks + "}":      float64(so.Expected.Flags["processing_no_ttl"]),
		"idemctl_processing_age_unknown_records{" + ks + "}": float64(so.Kinds["processing_no_ttl"]), // no TTL, no age
		"idemctl_memory_unknown_records{" + ks + "}":         0,
		"idemctl_scan_keys{" + ks + "}":                      5000,
		"idemctl_scan_complete{" + ks + "}":                  1,
		"idemctl_scan_success{}":                             1,
		"idemctl_scans_total{}":                              1,
		"idemctl_scan_errors_total{}":                        0,
		"idemctl_scan_keys_total{}":                          5000,
		"idemctl_scan_interval_seconds{}":                    60,
	}
	for st, n := range so.Expected.ByState {
		want["idemctl_records{"+ks+",state="+st+"}"] = float64(n)
	}
	for f, n := range so.Expected.Flags {
		want["idemctl_flag_records{flag="+f+","+ks+"}"] = float64(n)
	}
	mem, oldest := redisTruth(t, srv)
	for st, n := range mem {
		want["idemctl_memory_bytes{"+ks+",state="+st+"}"] = float64(n)
	}
	promtest.Expect(t, m, want)
	// The age was read at scan time; Redis's clock has moved on a little since.
	if got := m["idemctl_oldest_processing_age_seconds{"+ks+"}"]; got < 15*60 || math.Abs(got-oldest) > 5 {
		t.Errorf("oldest processing age %vs, Redis says %vs", got, oldest)
	}
	if ls := m["idemctl_last_success_timestamp_seconds{}"]; math.Abs(ls-float64(time.Now().Unix())) > 60 {
		t.Errorf("last success %v", ls)
	}
	for k := range m {
		for _, l := range strings.Split(k[strings.IndexByte(k, '{')+1:len(k)-1], ",") {
			if name, _, _ := strings.Cut(l, "="); l != "" && !slices.Contains([]string{"keyspace", "state", "flag", "version", "cause", "kind", "rule", "severity", "bucket", "quantile", "read_path", "revision", "mode"}, name) { // all but keyspace: fixed lists in the code
				t.Errorf("unbounded label %q in %s", name, k)
			}
		}
	}
	r := b.Stop(t)
	r.MustCode(t, 0)
	if !strings.Contains(r.Stderr, "serving http://"+addr+"/metrics") || !strings.Contains(r.Stderr, "stopped") {
		t.Errorf("stderr %q", r.Stderr)
	}
}

// redisTruth reads, straight from Redis, MEMORY USAGE summed by state and
// the oldest processing record's age (reserve TTL 1h minus its PTTL).
func redisTruth(t *testing.T, srv *redistest.Server) (map[string]int64, float64) {
	t.Helper()
	ctx := t.Context()
	c := srv.Client(0)
	defer c.Close()
	keys, err := c.Keys(ctx, "atlasmart:ch23:idem:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	pipe := c.Pipeline()
	states := make([]func() string, len(keys))
	mems := make([]func() int64, len(keys))
	ttls := make([]func() time.Duration, len(keys))
	for i, k := range keys {
		states[i] = pipe.HGet(ctx, k, "state").Val
		mems[i] = pipe.MemoryUsage(ctx, k, 0).Val
		ttls[i] = pipe.PTTL(ctx, k).Val
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	mem := map[string]int64{}
	var oldest float64
	for i := range keys {
		st, _ := inspect.ParseState(states[i]())
		mem[st.String()] += mems[i]()
		if st == inspect.StateProcessing && ttls[i]() > 0 {
			oldest = max(oldest, (time.Hour - ttls[i]()).Seconds())
		}
	}
	return mem, oldest
}

// An exporter started while Redis is down serves the failure as metrics and
// keeps retrying; it does not exit.
func TestExporterSurvivesUnreachableRedis(t *testing.T) {
	dead := freeAddr(t)
	addr := freeAddr(t)
	b := clitest.Start(t, "exporter", "--url", "redis://"+dead, "--preset", "atlasmart", "--listen", addr,
		"--interval", "1s", "--dial-timeout", "200ms", "--read-timeout", "200ms")
	deadline := time.Now().Add(20 * time.Second)
	var m map[string]float64
	for time.Now().Before(deadline) {
		if resp, err := http.Get("http://" + addr + "/metrics"); err == nil {
			resp.Body.Close()
			if m = promtest.Scrape(t, "http://"+addr+"/metrics"); m["idemctl_scan_errors_total{}"] >= 2 {
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if m["idemctl_scan_errors_total{}"] < 2 || m["idemctl_scan_success{}"] != 0 || m["idemctl_last_success_timestamp_seconds{}"] != 0 {
		t.Fatalf("metrics with Redis down: %v\nstderr: %s", m, b.Stderr.String())
	}
	if _, ok := m["idemctl_records{keyspace=atlasmart,state=processing}"]; ok {
		t.Error("record metrics must be absent until a scan completes, not zero")
	}
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	var h exporter.Health
	json.NewDecoder(resp.Body).Decode(&h)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || h.Status != "starting" || !strings.Contains(h.LastError, "cannot connect to Redis") {
		t.Errorf("healthz %d %+v", resp.StatusCode, h)
	}
	r := b.Stop(t)
	r.MustCode(t, 0)
	if !strings.Contains(r.Stderr, "scan failed") {
		t.Errorf("stderr %q", r.Stderr)
	}
}

func TestExporterRefusesNonLoopbackAndBadFlags(t *testing.T) {
	srv := redistest.Shared(t)
	base := []string{"exporter", "--url", srv.URL(0), "--preset", "atlasmart"}
	for _, listen := range []string{"0.0.0.0:9481", ":9481", "192.0.2.1:9481"} {
		r := clitest.Run(t, nil, append(base, "--listen", listen)...)
		r.MustCode(t, cli.ExitRefused)
		r.OneLineErr(t)
		if !strings.Contains(r.Stderr, "--listen-any") {
			t.Errorf("%s: %q", listen, r.Stderr)
		}
	}
	for _, bad := range [][]string{{"--interval", "10ms"}, {"--max-keys", "5"}, {"--listen", "no-port"},
		{"--group-label", "tenant"}, {"--group-label", "principal", "--group-cap", "1000"}, {"extra-arg"},
		{"--listen", "127.0.0.1:0", "--web.config.file", "/nonexistent/web.yml"}} {
		r := clitest.Run(t, nil, append(append([]string{}, base...), bad...)...)
		r.MustCode(t, cli.ExitUsage)
		r.OneLineErr(t)
	}
	// --listen-any is the explicit opt-in.
	b := clitest.Start(t, append(base, "--listen", "0.0.0.0:0", "--listen-any")...)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(b.Stderr.String(), "serving http://") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	b.Stop(t).MustCode(t, 0)
	h := clitest.Run(t, nil, "exporter", "--help")
	h.MustCode(t, 0)
	for _, f := range []string{"--listen", "--listen-any", "--interval", "--scan-timeout", "--keys-per-sec", "--group-cap", "--web.config.file"} {
		if !strings.Contains(h.Stdout, f) {
			t.Errorf("exporter --help lacks %s", f)
		}
	}
}

// The alert rules parse, and every idemctl_* metric and grouping label they
// use is one a live exporter serves.
func TestAlertRulesUseExportedMetrics(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(clitest.RepoRoot, "alerts/idemctl-rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Expr        string            `yaml:"expr"`
				For         string            `yaml:"for"`
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("alerts/idemctl-rules.yml: %v", err)
	}

	url := clitest.SeededURL(t, 200, exporterTiming...)
	// with the reaper inside (a dry run), so its metrics are served too
	// and a ledger and a stream keyspace (a stream with a group), so their
	// metrics are served too
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	rc := redis.NewClient(opt)
	defer rc.Close()
	if err := rc.XGroupCreateMkStream(t.Context(), "ev:alerts", "billing", "$").Err(); err != nil {
		t.Fatal(err)
	}
	ledger := clitest.WriteConfig(t, "keyspaces:\n  - {name: billing, kind: ledger, preset: zset-window}\n  - {name: events, kind: stream, match: \"ev:*\"}\n")
	_, addr := startExporter(t, url, "--reap-policy", reapPolicyFile(t, "atlasmart"), "--config", ledger)
	served := map[string]bool{}
	for k := range promtest.Scrape(t, "http://"+addr+"/metrics") {
		served[k[:strings.IndexByte(k, '{')]] = true
	}
	labels := append(append(exporter.LabelNames(), reaper.LabelNames()...), "instance", "job") // job and instance come from the scrape

	metricRe := regexp.MustCompile(`\bidemctl_[a-zA-Z0-9_]+`)
	byRe := regexp.MustCompile(`\b(?:by|without|on|ignoring)\s*\(([^)]*)\)`)
	names := map[string]bool{}
	var n int
	for _, g := range doc.Groups {
		if g.Name == "" || len(g.Rules) == 0 {
			t.Errorf("group %q is empty or unnamed", g.Name)
		}
		for _, r := range g.Rules {
			n++
			if r.Alert == "" || names[r.Alert] {
				t.Errorf("rule %q: missing or repeated alert name", r.Alert)
			}
			names[r.Alert] = true
			if _, err := model.ParseDuration(r.For); err != nil {
				t.Errorf("%s: for %q: %v", r.Alert, r.For, err)
			}
			if r.Labels["severity"] == "" || r.Annotations["summary"] == "" {
				t.Errorf("%s: needs labels.severity and annotations.summary", r.Alert)
			}
			if strings.Count(r.Expr, "(") != strings.Count(r.Expr, ")") {
				t.Errorf("%s: unbalanced parentheses in %q", r.Alert, r.Expr)
			}
			used := metricRe.FindAllString(r.Expr, -1)
			if len(used) == 0 {
				t.Errorf("%s: expr uses no idemctl metric: %q", r.Alert, r.Expr)
			}
			for _, m := range used {
				if !served[m] || !slices.Contains(append(exporter.MetricNames(), reaper.MetricNames()...), m) {
					t.Errorf("%s: %s is not served by the exporter", r.Alert, m)
				}
			}
			for _, grp := range byRe.FindAllStringSubmatch(r.Expr, -1) {
				for _, l := range strings.Split(grp[1], ",") {
					if l = strings.TrimSpace(l); l != "" && !slices.Contains(labels, l) {
						t.Errorf("%s: label %q is not one the exporter sets", r.Alert, l)
					}
				}
			}
		}
	}
	for _, want := range []string{"IdempotencyStuckRequests", "IdempotencyNoTTLGrowth", "IdempotencyMemoryGrowth", "IdempotencyReaperBreakerTripped"} {
		if !names[want] {
			t.Errorf("rules lack %s", want)
		}
	}
	if n == 0 {
		t.Fatal("no rules")
	}
}

// The profile's listen and exporter_interval apply when the flags are not
// given; a non-loopback listen from the config is refused like the flag.
func TestExporterListenFromProfile(t *testing.T) {
	srv := redistest.Shared(t)
	addr := freeAddr(t)
	dir := t.TempDir()
	write := func(listen string) string {
		p := dir + "/" + strings.NewReplacer(":", "_", ".", "_").Replace(listen) + ".yaml"
		os.WriteFile(p, []byte("default_profile: p\nprofiles:\n  p:\n    url: "+srv.URL(0)+
			"\n    listen: \""+listen+"\"\n    exporter_interval: 7s\nkeyspaces:\n  - name: orders\n    preset: atlasmart\n"), 0o600)
		return p
	}
	b := clitest.Start(t, "exporter", "--config", write(addr))
	waitHealthy(t, b, addr)
	m := promtest.Scrape(t, "http://"+addr+"/metrics")
	if m["idemctl_scan_interval_seconds{}"] != 7 || m["idemctl_scan_complete{keyspace=orders}"] != 1 {
		t.Errorf("metrics %v", m)
	}
	b.Stop(t).MustCode(t, 0)
	clitest.Run(t, nil, "exporter", "--config", write("0.0.0.0:9481")).MustCode(t, cli.ExitRefused)
}
