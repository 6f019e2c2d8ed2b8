package exporter

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/inspecttest"
	"github.com/idemctl/idemctl/internal/testkit/promtest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

func TestMain(m *testing.M) { os.Exit(redistest.RunMain(m)) }

// Long reserve TTL and timeout: no record changes class during a test.
const reserveTTL, timeout = time.Hour, 10 * time.Minute

func seed(t *testing.T, c redis.UniversalClient, n int) appsim.Result {
	t.Helper()
	res, err := appsim.Seed(t.Context(), c, appsim.Plan{
		Schema: "atlasmart", Count: n, ReserveTTL: reserveTTL, ProcessingTimeout: timeout,
		Retention: 5 * time.Minute, LargeResponse: inspect.DefaultLargeResponse, RandSeed: 7,
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func keyspace(t *testing.T, name string) *inspect.Keyspace {
	t.Helper()
	return inspecttest.Spec(t, inspect.KeyspaceSpec{Name: name, Schema: inspecttest.Preset(t, "atlasmart"), ReserveTTL: reserveTTL, ProcessingTimeout: timeout})
}

func newExporter(t *testing.T, c redis.UniversalClient, mod func(*Config)) *Exporter {
	t.Helper()
	cfg := Config{
		Connect:   func(context.Context) (redis.UniversalClient, error) { return c, nil },
		Keyspaces: []*inspect.Keyspace{keyspace(t, "orders")}, Interval: time.Minute, ScanTimeout: time.Minute,
		Version: "test",
	}
	if mod != nil {
		mod(&cfg)
	}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// ownExporter is an exporter, changed by mod, of a server of the test's
// own (a client of it returned), for tests that seed what the orders
// keyspace does not hold.
func ownExporter(t *testing.T, mod func(*Config)) (*redis.Client, *Exporter) {
	t.Helper()
	_, c := redistest.OwnClient(t)
	return c, newExporter(t, c, mod)
}

// scanned scans once and returns the series e's handler then serves.
func scanned(t *testing.T, e *Exporter) map[string]float64 {
	t.Helper()
	hs := httptest.NewServer(e.Handler())
	defer hs.Close()
	e.ScanOnce(t.Context())
	return promtest.Scrape(t, hs.URL+"/metrics")
}

func TestExporterKeepsLastGoodValuesWhenScansFail(t *testing.T) {
	own := redistest.Own(t)
	c := redis.NewClient(&redis.Options{Addr: own.Addr, DisableIdentity: true, MaxRetries: -1,
		DialTimeout: 300 * time.Millisecond, ReadTimeout: 300 * time.Millisecond})
	defer c.Close()
	res := seed(t, c, 500)
	var logs strings.Builder
	var logMu sync.Mutex
	e := newExporter(t, c, func(cfg *Config) { cfg.Log = lockedWriter{&logs, &logMu} })
	hs := httptest.NewServer(e.Handler())
	defer hs.Close()

	if code, h := health(t, hs.URL); code != 503 || h.Status != "starting" {
		t.Fatalf("healthz before any scan: %d %+v", code, h)
	}
	m := promtest.Scrape(t, hs.URL+"/metrics")
	if _, ok := m[`idemctl_records{keyspace=orders,state=processing}`]; ok || m["idemctl_last_success_timestamp_seconds{}"] != 0 {
		t.Fatalf("record metrics before the first scan must be absent: %v", m)
	}
	if !e.ScanOnce(t.Context()) {
		t.Fatal("scan did not run")
	}
	if code, h := health(t, hs.URL); code != 200 || h.Status != "ok" || h.Scans != 1 {
		t.Fatalf("healthz after a scan: %d %+v", code, h)
	}
	before := promtest.Scrape(t, hs.URL+"/metrics")
	processing := `idemctl_records{keyspace=orders,state=processing}`
	if before[processing] != float64(res.Expected.ByState["processing"]) || before["idemctl_scan_success{}"] != 1 {
		t.Fatalf("after one scan: %v", before)
	}

	own.Stop()
	e.ScanOnce(t.Context())
	after := promtest.Scrape(t, hs.URL+"/metrics")
	if after["idemctl_scan_success{}"] != 0 || after["idemctl_scan_errors_total{}"] != 1 || after["idemctl_scans_total{}"] != 2 ||
		after["idemctl_scan_complete{keyspace=orders}"] != 0 {
		t.Errorf("failed scan not reported: %v", after)
	}
	for k, v := range before {
		if strings.HasPrefix(k, "idemctl_scan") || strings.HasPrefix(k, "idemctl_last_success") {
			continue
		}
		if after[k] != v {
			t.Errorf("%s changed from %v to %v after a failed scan", k, v, after[k])
		}
	}
	if after["idemctl_last_success_timestamp_seconds{}"] != before["idemctl_last_success_timestamp_seconds{}"] {
		t.Error("last success moved on a failed scan")
	}
	_, h := health(t, hs.URL)
	logMu.Lock()
	defer logMu.Unlock()
	if h.LastError == "" || h.Errors != 1 || !strings.Contains(logs.String(), "scan failed") {
		t.Errorf("health %+v, log %q", h, logs.String())
	}
}

// While a scan runs, scan_progress_ratio follows its SCAN cursors; it is 0
// when none runs.
func TestScanProgressExported(t *testing.T) {
	_, c := redistest.SharedClient(t)
	seed(t, c, 2000)
	e := newExporter(t, c, func(cfg *Config) { cfg.Scan = inspect.Options{Count: 100, KeysPerSec: 2000} })
	hs := httptest.NewServer(e.Handler())
	defer hs.Close()
	done := make(chan bool)
	go func() { done <- e.ScanOnce(t.Context()) }()
	var seen float64
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && (seen <= 0 || seen >= 1); {
		time.Sleep(50 * time.Millisecond)
		seen = promtest.Scrape(t, hs.URL+"/metrics")["idemctl_scan_progress_ratio{}"]
	}
	if !<-done || seen <= 0 || seen >= 1 {
		t.Fatalf("progress during the scan: %v", seen)
	}
	if v := promtest.Scrape(t, hs.URL+"/metrics")["idemctl_scan_progress_ratio{}"]; v != 0 {
		t.Errorf("progress after the scan: %v", v)
	}
}

func TestNeverTwoScansAtOnce(t *testing.T) {
	_, c := redistest.SharedClient(t)
	seed(t, c, 200)
	entered, release := make(chan struct{}), make(chan struct{})
	e := newExporter(t, c, func(cfg *Config) {
		cfg.Connect = func(context.Context) (redis.UniversalClient, error) {
			entered <- struct{}{}
			<-release
			return c, nil
		}
	})
	hs := httptest.NewServer(e.Handler())
	defer hs.Close()
	done := make(chan bool)
	go func() { done <- e.ScanOnce(t.Context()) }()
	<-entered
	if e.ScanOnce(t.Context()) {
		t.Error("a second scan started while one was running")
	}
	if m := promtest.Scrape(t, hs.URL+"/metrics"); m["idemctl_scan_in_progress{}"] != 1 {
		t.Errorf("scan_in_progress = %v during a scan", m["idemctl_scan_in_progress{}"])
	}
	close(release)
	if !<-done {
		t.Fatal("first scan did not finish")
	}
	if m := promtest.Scrape(t, hs.URL+"/metrics"); m["idemctl_scan_in_progress{}"] != 0 || m["idemctl_scans_total{}"] != 1 {
		t.Errorf("after the scan: %v", m)
	}
}

func TestSlowScanTimesOutAsAMetric(t *testing.T) {
	_, c := redistest.SharedClient(t)
	seed(t, c, 2000)
	e := newExporter(t, c, func(cfg *Config) {
		cfg.Scan = inspect.Options{Count: 10, KeysPerSec: 200}
		cfg.ScanTimeout = 200 * time.Millisecond
	})
	hs := httptest.NewServer(e.Handler())
	defer hs.Close()
	e.ScanOnce(t.Context())
	m := promtest.Scrape(t, hs.URL+"/metrics")
	if m["idemctl_scan_success{}"] != 0 || m["idemctl_scan_errors_total{}"] != 1 || m["idemctl_scan_duration_seconds{}"] < 0.2 {
		t.Fatalf("timed-out scan: %v", m)
	}
	if _, h := health(t, hs.URL); !strings.Contains(h.LastError, "timed out") {
		t.Fatalf("health %+v", h)
	}
}

func TestRunLoopAndShutdown(t *testing.T) {
	_, c := redistest.SharedClient(t)
	seed(t, c, 100)
	e := newExporter(t, c, func(cfg *Config) { cfg.Interval = 50 * time.Millisecond })
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { e.Run(ctx); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for e.state().scans < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	if st := e.state(); st.scans < 3 || st.errors != 0 {
		t.Fatalf("scans %d errors %d", st.scans, st.errors)
	}
}

// Labels stay bounded: keyspace, state, flag and, when asked for, one
// capture's top N plus an other bucket, whatever the number of keys.
func TestLabelCardinalityAndGroupCap(t *testing.T) {
	_, c := redistest.SharedClient(t)
	res := seed(t, c, 3000)
	e := newExporter(t, c, func(cfg *Config) { cfg.GroupLabel, cfg.GroupCap = "principal", 3 })
	m := scanned(t, e)
	var groups []string
	var sum float64
	for k, v := range m {
		if strings.HasPrefix(k, "idemctl_group_records{") {
			groups = append(groups, k)
			sum += v
		}
	}
	if len(groups) != 4 || sum != float64(res.Count) || m[`idemctl_group_records{capture=principal,keyspace=orders,value=`+OtherValue+`}`] == 0 {
		t.Fatalf("group series %v sum %v", groups, sum)
	}
	if len(m) > 100 {
		t.Errorf("%d idemctl series for one keyspace", len(m))
	}
	allowed := LabelNames()
	for k := range m {
		name := k[:strings.IndexByte(k, '{')]
		if !slices.Contains(MetricNames(), name) {
			t.Errorf("%s is not listed by MetricNames", name)
		}
		for _, l := range strings.Split(strings.Trim(k[len(name):], "{}"), ",") {
			if l != "" && !slices.Contains(allowed, l[:strings.IndexByte(l, '=')]) {
				t.Errorf("unexpected label in %s", k)
			}
		}
	}
	if _, err := New(Config{Connect: e.cfg.Connect, Keyspaces: e.cfg.Keyspaces, Interval: time.Second, ScanTimeout: time.Second,
		GroupLabel: "tenant", GroupCap: 3}); err == nil {
		t.Error("a capture no template has should be refused")
	}
	if _, err := New(Config{Connect: e.cfg.Connect, Keyspaces: e.cfg.Keyspaces, Interval: time.Second, ScanTimeout: time.Second,
		GroupLabel: "principal", GroupCap: MaxGroupCap + 1}); err == nil {
		t.Error("a cap above MaxGroupCap should be refused")
	}
}

func health(t *testing.T, url string) (int, Health) {
	t.Helper()
	resp, err := http.Get(url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h Health
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, h
}

type lockedWriter struct {
	b  *strings.Builder
	mu *sync.Mutex
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
