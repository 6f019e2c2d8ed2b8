package main

import (
	"fmt"
	"time"
)

// The follow step's targets (issue 48).
const (
	followStaleP99   = 2 * time.Second // a stale record counted after its deadline, p99, following
	followOfApp      = 0.5             // following's server CPU over the application's own
	followOfPeriodic = 0.05            // following's server CPU over periodic passes', at 10M
	followAppP99Rise = 0.05            // the application's p99 with idemctl following over without
	followViewBytes  = 40.0            // the exporter's view, bytes a record
)

func (r *Results) followMode(name string) *FollowMode {
	if r.Follow == nil {
		return nil
	}
	for _, m := range r.Follow.Modes {
		if m.Mode == name {
			return m
		}
	}
	return nil
}

// markdownFollow is the follow table: each mode's stale latency, server
// CPU and the application's p99, beside the application alone.
func (r *Results) markdownFollow(p func(string, ...any)) {
	f := r.Follow
	if f == nil {
		return
	}
	p("\n### Following the keyspace (`follow`)\n\n")
	p("The application simulator asked for %d requests/s (%.0f achieved), %.0f %% of them crashing after RESERVE; the exporter's processing timeout %v, so each crash has a deadline. A deadline is counted when `idemctl_stale_records` (scraped every %v) reaches it; server CPU is redis-server's, idle (%.1f ms/s) subtracted.\n\n",
		f.Rate, f.Achieved, f.CrashRate*100, f.Timeout, followScrape, f.IdleCPU*1000)
	p("| | stale seen p50 s | p99 s | deadlines (missed, early) | first pass s | server CPU ms/s | share of the app's own | app p99 ms | exporter RSS MB | view B/record |\n")
	p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	p("| the application alone | | | | | %.1f | 100 %% | %s | | |\n", f.App.ServerCPU*1000, ms(f.App.AppP99))
	for _, m := range f.Modes {
		label := m.Command
		if m.Reported != "" {
			label += " (" + m.Reported + ")"
		}
		share := "–"
		if f.App.ServerCPU > 0 {
			share = fmt.Sprintf("%.1f %%", 100*m.IdemctlCPU(f.App)/f.App.ServerCPU)
		}
		view := "–"
		if m.ViewB > 0 {
			view = fmt.Sprintf("%.1f", m.ViewB)
		}
		p("| %s | %s | %s | %d (%d, %d) | %s | %.1f | %s | %s | %.0f | %s |\n", label, secs(m.StaleQ(0.5, m.Phase.Window)), secs(m.StaleQ(0.99, m.Phase.Window)),
			len(m.Stale)+m.Missed, m.Missed, m.Early, secs(m.FirstPass), m.IdemctlCPU(f.App)*1000, share, ms(m.Phase.AppP99), float64(m.RSS)/1024, view)
	}
}

// evaluateFollow checks the follow step's targets.
func (r *Results) evaluateFollow(add func(Target)) {
	fol, per := r.followMode("follow"), r.followMode("periodic")
	if r.Follow == nil || fol == nil {
		return
	}
	app := r.Follow.App
	p99 := fol.StaleQ(0.99, fol.Phase.Window)
	add(Target{Name: "follow: a stale record counted after its deadline, p99", Want: "≤ " + followStaleP99.String(),
		Got: secs(p99) + " s", Met: p99 <= followStaleP99 && len(fol.Stale) > 0, Measured: true})
	cpu := fol.IdemctlCPU(app)
	add(Target{Name: "follow: server CPU vs the application's own idempotency writes", Want: fmt.Sprintf("≤ %.0f %%", followOfApp*100),
		Got: fmt.Sprintf("%.1f %% (%.1f vs %.1f ms/s)", 100*cpu/max(app.ServerCPU, 1e-9), cpu*1000, app.ServerCPU*1000),
		Met: cpu <= followOfApp*app.ServerCPU, Measured: app.ServerCPU > 0})
	if per != nil {
		t := Target{Name: "follow: server CPU vs periodic passes at the default interval", Want: fmt.Sprintf("≤ %.0f %% (at 10M)", followOfPeriodic*100)}
		pc := per.IdemctlCPU(app)
		t.Got = fmt.Sprintf("%.1f %% (%.1f vs %.1f ms/s)", 100*cpu/max(pc, 1e-9), cpu*1000, pc*1000)
		t.Met, t.Measured = cpu <= followOfPeriodic*pc, r.N >= TenM
		if !t.Measured {
			t.Note = "the target is on 10M records"
		}
		add(t)
	}
	rise := float64(fol.Phase.AppP99)/float64(max(app.AppP99, 1)) - 1
	add(Target{Name: "follow: the application's p99 with idemctl following vs none", Want: fmt.Sprintf("≤ +%.0f %%", followAppP99Rise*100),
		Got: fmt.Sprintf("%+.1f %% (%s vs %s ms)", rise*100, ms(fol.Phase.AppP99), ms(app.AppP99)), Met: rise <= followAppP99Rise, Measured: app.AppP99 > 0})
	view := Target{Name: "follow: the exporter's view, bytes a record", Want: fmt.Sprintf("≤ %.0f", followViewBytes), Got: "not reported"}
	if fol.ViewB > 0 {
		view.Got, view.Met, view.Measured = fmt.Sprintf("%.1f (RSS %.0f MB for %d records)", fol.ViewB, float64(fol.RSS)/1024, fol.Records), fol.ViewB <= followViewBytes, true
	}
	add(view)
}
