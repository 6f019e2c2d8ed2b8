package inspect

import (
	"cmp"
	"slices"
	"strings"
	"time"
)

// The incident timeline: the stale records counted by the minute their
// worker reserved them (the clock of the read less the record's age), with
// the capture values (the endpoint) that hold the most. It says when a
// crash began and where; the TUI's Stats screen draws the same buckets.

// TimelineMinutes is how many minutes the timeline keeps: the latest ones
// with stale records reserved in them.
const TimelineMinutes = 15

// timelineTop is how many capture values each minute names.
const timelineTop = 2

// timelineValueCap bounds the distinct capture values counted in one
// minute; the rest are counted in the minute's total only.
const timelineValueCap = 1024

// TimelineCapture is the capture the timeline names for a template:
// "endpoint" when it has one, else its first capture ("" when none).
func TimelineCapture(names []string) string {
	if slices.Contains(names, "endpoint") {
		return "endpoint"
	}
	if len(names) > 0 {
		return names[0]
	}
	return ""
}

// IncidentTimeline is the timeline as a report holds it.
type IncidentTimeline struct {
	// Minutes are the latest minutes in which stale records were
	// reserved, oldest first, at most TimelineMinutes of them.
	Minutes []TimelineMinute `json:"minutes"`
	// Earlier counts the stale records reserved before the first minute
	// listed; AgeUnknown those whose age (so whose minute) is unknown.
	Earlier    int64 `json:"earlier"`
	AgeUnknown int64 `json:"age_unknown"`
}

// TimelineMinute is one minute of the timeline.
type TimelineMinute struct {
	Minute time.Time       `json:"minute"` // its start, UTC, on the clock of the read (server or snapshot)
	Stale  int64           `json:"stale"`
	Top    []TimelineValue `json:"top"` // the capture values with the most stale records, most first
}

// TimelineValue is one capture value's stale records in a minute.
type TimelineValue struct {
	Capture string `json:"capture"` // endpoint, or the template's first capture
	Value   Text   `json:"value"`
	Count   int64  `json:"count"`
}

// timeline folds stale records into minutes, keeping the latest
// TimelineMinutes in memory bounded by them: a minute earlier than all
// those kept, once they are TimelineMinutes, is only counted in earlier.
type timeline struct {
	minutes map[int64]*tlMinute
	earlier int64
	ageUnk  int64
}

type tlMinute struct {
	n      int64
	values map[tlValue]int64
}

type tlValue struct{ capture, value string }

// add counts one stale record reserved nowMs-ageMs; capture names the
// value counted ("" when the key does not fit the template). value may
// alias a scratch buffer: it is cloned when kept.
func (t *timeline) add(nowMs, ageMs int64, capture, value string) {
	if ageMs < 0 || nowMs <= 0 {
		t.ageUnk++
		return
	}
	m := (nowMs - ageMs) / 60_000
	b := t.minutes[m]
	if b == nil {
		if t.minutes == nil {
			t.minutes = map[int64]*tlMinute{}
		}
		if len(t.minutes) >= TimelineMinutes {
			lo := t.earliest()
			if m < lo {
				t.earlier++
				return
			}
			t.earlier += t.minutes[lo].n
			delete(t.minutes, lo)
		}
		b = &tlMinute{values: map[tlValue]int64{}}
		t.minutes[m] = b
	}
	b.n++
	if capture == "" {
		return
	}
	if k := (tlValue{capture, value}); b.values[k] > 0 {
		b.values[k]++
	} else if len(b.values) < timelineValueCap {
		b.values[tlValue{capture, strings.Clone(value)}] = 1
	}
}

// earliest is the earliest minute kept.
func (t *timeline) earliest() int64 {
	first, lo := true, int64(0)
	for m := range t.minutes {
		if first || m < lo {
			first, lo = false, m
		}
	}
	return lo
}

// report shapes the timeline, oldest minute first.
func (t *timeline) report() IncidentTimeline {
	r := IncidentTimeline{Minutes: []TimelineMinute{}, Earlier: t.earlier, AgeUnknown: t.ageUnk}
	for m, b := range t.minutes {
		tm := TimelineMinute{Minute: time.UnixMilli(m * 60_000).UTC(), Stale: b.n, Top: []TimelineValue{}}
		for k, n := range b.values {
			tm.Top = append(tm.Top, TimelineValue{Capture: k.capture, Value: Text(k.value), Count: n})
		}
		slices.SortFunc(tm.Top, func(a, b TimelineValue) int {
			return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Value, b.Value), cmp.Compare(a.Capture, b.Capture))
		})
		tm.Top = tm.Top[:min(timelineTop, len(tm.Top))]
		r.Minutes = append(r.Minutes, tm)
	}
	slices.SortFunc(r.Minutes, func(a, b TimelineMinute) int { return a.Minute.Compare(b.Minute) })
	return r
}
