package ui

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/ui/common"
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

// afterScan records a complete scan, finished at at on a server whose
// clock read serverMs: its counts for the history, which records became
// stale since the previous one, and the incident timeline. It reads every
// record once, at the end of a scan, never per batch.
func (c *shared) afterScan(at time.Time, serverMs int64) {
	s := c.store
	snap := snapshot{at: at}
	stale := make(map[string]struct{})
	capture := c.timelineCapture()
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
	c.history = append(c.history, snap)
	if len(c.history) > historyLen {
		c.history = c.history[1:]
	}
	// Newly stale: stale now, not in the previous complete scan. The first
	// scan has nothing to compare with, so it marks nothing.
	c.newStale = nil
	if c.staleKeys != nil {
		c.newStale = map[string]struct{}{}
		for k := range stale {
			if _, was := c.staleKeys[k]; !was {
				c.newStale[k] = struct{}{}
			}
		}
	}
	c.staleKeys = stale
	c.timeline = buildTimeline(s, serverMs, capture)
	c.staleTop = topCounts(staleBy, 5)
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

// isNewStale reports whether r became stale since the previous scan.
func (c *shared) isNewStale(r *inspect.Record) bool {
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
func (c *shared) timelineCapture() string {
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

// signedCount is a change in a count: +1,200, -3, ±0.
func signedCount(d int64) string {
	switch {
	case d > 0:
		return "+" + common.Count(d)
	case d < 0:
		return "-" + common.Count(-d)
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
