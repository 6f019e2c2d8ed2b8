package exporter

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/inspecttest"
	"github.com/idemctl/idemctl/internal/testkit/promtest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// With Follow, idemctl_stale_records counts a stuck request within 2s of
// its deadline though the next scan is an hour away, and the follower's
// own metrics say the mode and that it is live.
func TestFollowStaleCountMovesOnTime(t *testing.T) {
	_, c := redistest.OwnClient(t)
	ks := inspecttest.Spec(t, inspect.KeyspaceSpec{Name: "orders", Schema: inspecttest.Preset(t, "atlasmart"),
		ReserveTTL: time.Minute, ProcessingTimeout: time.Second})
	e := newExporter(t, c, func(cfg *Config) { cfg.Keyspaces, cfg.Interval, cfg.Follow = []*inspect.Keyspace{ks}, time.Hour, true })
	hs := httptest.NewServer(e.Handler())
	defer hs.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e.ScanOnce(ctx)
	go e.runFollow(ctx)
	waitMetric(t, hs.URL, `idemctl_follow_live{}`, 1)
	m := promtest.Scrape(t, hs.URL+"/metrics")
	if m[`idemctl_follow_mode{mode=tracking}`] != 1 {
		t.Fatalf("mode: %v", m)
	}
	for i := range 3 {
		key := appsim.OrderKey("customer-1", fmt.Sprint("stuck-", i))
		if err := appsim.Reserve.Run(ctx, c, []string{key}, "fp", 60).Err(); err != nil {
			t.Fatal(err)
		}
	}
	reserved := time.Now()
	waitMetric(t, hs.URL, `idemctl_records{keyspace=orders,state=processing}`, 3)
	waitMetric(t, hs.URL, `idemctl_stale_records{keyspace=orders}`, 3)
	if late := time.Since(reserved) - time.Second; late > 2*time.Second {
		t.Errorf("stale counted %s after the deadline", late)
	}
	c.FlushDB(ctx)
	waitMetric(t, hs.URL, `idemctl_stale_records{keyspace=orders}`, 0)
	m = promtest.Scrape(t, hs.URL+"/metrics")
	if m[`idemctl_follow_resyncs_total{}`] < 2 || m[`idemctl_follow_stale_turned_total{}`] != 3 {
		t.Errorf("resyncs %v, stale turned %v", m[`idemctl_follow_resyncs_total{}`], m[`idemctl_follow_stale_turned_total{}`])
	}
}

func waitMetric(t *testing.T, url, series string, want float64) {
	t.Helper()
	var got float64
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if got = promtest.Scrape(t, url+"/metrics")[series]; got == want {
			return
		}
	}
	t.Fatalf("%s = %v after 5s, want %v", series, got, want)
}

// While the live view holds every change, the full scan waits for
// FullInterval: the ticks between read only the ledgers and streams, so
// following does not load the server with a pass every interval; with
// the view not live (here: never started) every tick is a full scan.
func TestFollowSpacesFullScans(t *testing.T) {
	_, c := redistest.OwnClient(t)
	ks := inspecttest.Spec(t, inspect.KeyspaceSpec{Name: "orders", Schema: inspecttest.Preset(t, "atlasmart"),
		ReserveTTL: time.Minute, ProcessingTimeout: time.Second})
	for _, follow := range []bool{true, false} {
		e := newExporter(t, c, func(cfg *Config) {
			cfg.Keyspaces, cfg.Interval, cfg.FullInterval, cfg.Follow = []*inspect.Keyspace{ks}, time.Second, time.Hour, follow
		})
		hs := httptest.NewServer(e.Handler())
		ctx, cancel := context.WithCancel(context.Background())
		if follow {
			go e.runFollow(ctx)
			waitMetric(t, hs.URL, `idemctl_follow_live{}`, 1)
		}
		go e.Run(ctx)
		time.Sleep(3500 * time.Millisecond)
		m := promtest.Scrape(t, hs.URL+"/metrics")
		cancel()
		hs.Close()
		scans := m[`idemctl_scans_total{}`]
		switch {
		case follow && (scans != 1 || m[`idemctl_full_scan_interval_seconds{}`] != 3600):
			t.Errorf("following: %v full scans in 3.5 s of 1 s ticks (want the first only), full interval %v", scans, m[`idemctl_full_scan_interval_seconds{}`])
		case !follow && scans < 3:
			t.Errorf("not following: %v scans in 3.5 s of 1 s ticks, want one a tick", scans)
		}
	}
}
