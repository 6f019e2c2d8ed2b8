package ui

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

// trend is time across scans: counts per complete scan, the stale keys of
// the last one (to mark those newly stale), and the incident timeline.
type trend struct {
	history   []snapshot
	staleKeys map[string]struct{}
	newStale  map[string]struct{}
	timeline  []timelineRow
	staleTop  []groupCount // the endpoints (or first capture) with the most stale records
}

// snapshot is what one complete scan counted, for the Overview's history.
type snapshot struct {
	at                              time.Time
	stale, processing, noTTL, total int64
}

const historyLen = 30 // scans kept: a refresh every few seconds covers minutes

// afterScan records a complete scan: its counts for the history, which
// records became stale since the previous one, and the incident timeline.
// It reads every record once, at the end of a scan, never per batch.
func (m *Model) afterScan() {
	s := m.store
	snap := snapshot{at: m.lastComplete}
	stale := make(map[string]struct{})
	capture := m.timelineCapture()
	staleBy, names := map[string]int64{}, map[string]string{}
	// Counts from the packed fields; only stale records are decoded.
	for i := range s.recs.Len() {
		f := s.recs.Flags(i)
		snap.total++
		if s.recs.State(i) == inspect.StateProcessing {
			snap.processing++
		}
		if f.Has(inspect.FlagNoTTL) {
			snap.noTTL++
		}
		if !f.Has(inspect.FlagStale) {
			continue
		}
		snap.stale++
		r := s.recs.Peek(i, &s.peek)
		if capture != "" {
			countKey(staleBy, names, r.Group(capture))
		}
		stale[strings.Clone(r.Key)] = struct{}{}
	}
	m.history = append(m.history, snap)
	if len(m.history) > historyLen {
		m.history = m.history[1:]
	}
	// Newly stale: stale now, not in the previous complete scan. The first
	// scan has nothing to compare with, so it marks nothing.
	m.newStale = nil
	if m.staleKeys != nil {
		m.newStale = map[string]struct{}{}
		for k := range stale {
			if _, was := m.staleKeys[k]; !was {
				m.newStale[k] = struct{}{}
			}
		}
	}
	m.staleKeys = stale
	m.timeline = buildTimeline(s, m.serverTimeMs, capture)
	m.staleTop = topCounts(staleBy, 5)
}

// topCounts is the n largest counts, ties by value.
func topCounts(byValue map[string]int64, n int) []groupCount {
	out := make([]groupCount, 0, len(byValue))
	for v, c := range byValue {
		out = append(out, groupCount{v, c})
	}
	slices.SortFunc(out, func(a, b groupCount) int { return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(a.value, b.value)) })
	return out[:min(n, len(out))]
}

// staleTopView lists, on the Overview, the values of the timeline's
// capture (the endpoint) with the most stale records: enter opens their
// stale records, where = then says for whom.
func (m *Model) staleTopView() string {
	if len(m.staleTop) == 0 {
		return ""
	}
	capture := m.timelineCapture()
	lines := []string{m.styles.Title.Render("MOST STALE BY " + strings.ToUpper(inspect.Sanitize(capture)))}
	for _, g := range m.staleTop {
		f := captureDrill(capture, g.value)
		f.Stale = true
		lines = append(lines, m.drillItem(fmt.Sprintf("%9s %s", count(g.n), inspect.Sanitize(orDash(g.value))), f))
	}
	return strings.Join(lines, "\n")
}

// isNewStale reports whether r became stale since the previous scan.
func (c *common) isNewStale(r *inspect.Record) bool {
	_, ok := c.newStale[r.Key]
	return ok && r.Stale()
}

var sparkRunes = []rune("▁▂▃▄▅▆▇█")

// sparkline draws values as one line of block characters, scaled between
// their minimum and maximum.
func sparkline(vals []int64) string {
	if len(vals) == 0 {
		return ""
	}
	lo, hi := slices.Min(vals), slices.Max(vals)
	out := make([]rune, len(vals))
	for i, v := range vals {
		lvl := 0
		if hi > lo {
			lvl = int((v - lo) * int64(len(sparkRunes)-1) / (hi - lo))
		}
		out[i] = sparkRunes[lvl]
	}
	return string(out)
}

// historyView is the Overview's history block: a sparkline per count over
// the last scans, the count now and its change since the previous scan.
func (m *Model) historyView() string {
	h := m.history
	if len(h) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(m.styles.Title.Render(fmt.Sprintf("SINCE %s (%s)", h[0].at.Format("15:04:05"), units.Nouns(int64(len(h)), "scan", "scans"))))
	for _, it := range []struct {
		name string
		get  func(snapshot) int64
	}{
		{"stale", func(s snapshot) int64 { return s.stale }},
		{"processing", func(s snapshot) int64 { return s.processing }},
		{"no TTL", func(s snapshot) int64 { return s.noTTL }},
		{"total", func(s snapshot) int64 { return s.total }},
	} {
		vals := make([]int64, len(h))
		for i, s := range h {
			vals[i] = it.get(s)
		}
		now := vals[len(vals)-1]
		change := ""
		if len(vals) > 1 {
			change = signedCount(now-vals[len(vals)-2]) + " since " + h[len(h)-2].at.Format("15:04:05")
		}
		fmt.Fprintf(&b, "\n  %-10s %s %9s  %s", it.name, sparkline(vals), count(now), m.styles.Dim.Render(change))
	}
	if n := len(m.newStale); n > 0 {
		b.WriteString("\n  " + m.styles.Stale.Render(count(n)+" records became stale since the previous scan (+stale in Records)"))
	}
	return b.String()
}

// timelineRow is one minute of the incident timeline: stale records whose
// worker reserved them in that minute, and the endpoints they belong to.
type timelineRow struct {
	minute int64 // server-clock epoch minutes
	n      int64
	top    []groupCount
}

type groupCount struct {
	value string
	n     int64
}

const timelineRows = 15

// timelineCapture is the capture the timeline names: "endpoint" when the
// template has one, else its first capture.
func (c *common) timelineCapture() string {
	names := c.captureNames()
	if slices.Contains(names, "endpoint") {
		return "endpoint"
	}
	if len(names) > 0 {
		return names[0]
	}
	return ""
}

// buildTimeline buckets the stale records by the minute they were reserved
// (the server time of the scan less their derived age): when the crash
// started, and where. The latest minutes are kept.
func buildTimeline(s *store, nowMs int64, capture string) []timelineRow {
	byMinute, names := map[int64]map[string]int64{}, map[string]string{}
	for i := range s.recs.Len() {
		if !s.recs.Flags(i).Has(inspect.FlagStale) || s.recs.AgeMs(i) < 0 || nowMs <= 0 {
			continue
		}
		r := s.recs.Peek(i, &s.peek)
		min := (nowMs - r.AgeMs) / 60_000
		g := byMinute[min]
		if g == nil {
			g = map[string]int64{}
			byMinute[min] = g
		}
		countKey(g, names, r.Group(capture))
	}
	rows := make([]timelineRow, 0, len(byMinute))
	for minute, g := range byMinute {
		row := timelineRow{minute: minute, top: topCounts(g, 2)}
		for _, n := range g {
			row.n += n
		}
		rows = append(rows, row)
	}
	slices.SortFunc(rows, func(a, b timelineRow) int { return cmp.Compare(a.minute, b.minute) })
	if len(rows) > timelineRows {
		rows = rows[len(rows)-timelineRows:]
	}
	return rows
}

// timelineView renders the incident timeline for the Stats screen.
func (m *Model) timelineView() []string {
	if len(m.timeline) == 0 {
		return nil
	}
	capture := m.timelineCapture()
	out := []string{m.styles.Title.Render("STALE BY MINUTE RESERVED") + m.styles.Dim.Render(" (server time; top "+inspect.Sanitize(capture)+")")}
	var maxN int64
	for _, r := range m.timeline {
		maxN = max(maxN, r.n)
	}
	for _, r := range m.timeline {
		var top []string
		for _, g := range r.top {
			top = append(top, inspect.Sanitize(orDash(g.value))+" "+count(g.n))
		}
		at := time.UnixMilli(r.minute * 60_000).In(m.now().Location()).Format("15:04")
		out = append(out, fmt.Sprintf("%s %7s %-10s %s", at, count(r.n), m.styles.Stale.Render(bar(r.n, maxN, 10)), strings.Join(top, " · ")))
	}
	return out
}

// signedCount is a change in a count: +1,200, -3, ±0.
func signedCount(d int64) string {
	switch {
	case d > 0:
		return "+" + count(d)
	case d < 0:
		return "-" + count(-d)
	}
	return "±0"
}

// countKey counts one more of k, which may alias a Peeker's scratch. Go
// stores the key of every map assignment, even over an equal one, so each
// assignment uses the clone that names holds.
func countKey(m map[string]int64, names map[string]string, k string) {
	c, ok := names[k]
	if !ok {
		c = strings.Clone(k)
		names[c] = c
	}
	m[c]++
}
