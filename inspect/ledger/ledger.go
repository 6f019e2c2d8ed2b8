// Package ledger reads dedupe ledgers: the sets and sorted sets of
// processed event IDs a consumer keeps, by SCAN MATCH TYPE on every
// primary and a few O(log n) commands a key, never a member list; and
// proposes a ledger's shape from sampled keys.
//
// Floor 1 of ARCHITECTURE.md, the read engine: it may import inspect (the
// key template, the primaries, pipelines), and the foundations.
package ledger

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/idemctl/idemctl/inspect/keytemplate"
)

// Ledger shapes: how a dedupe ledger of processed event IDs is kept.
const (
	// ZSetWindow is one sorted set per consumer/topic: members are
	// event IDs, scores the processing time, trimmed to a window by
	// ZREMRANGEBYSCORE.
	ZSetWindow = "zset-window"
	// SetPerPeriod is one set per consumer per period (day, hour):
	// SADD then EXPIRE, so old periods vanish.
	SetPerPeriod = "set-per-period"
)

// Score units of a zset ledger.
const (
	ScoreMillis  = "ms"
	ScoreSeconds = "s"
)

// Ledger is one dedupe-ledger keyspace, compiled.
type Ledger struct {
	Name      string
	Match     string
	Shape     string                // ZSetWindow or SetPerPeriod
	Window    time.Duration         // how long an entry is meant to be kept
	ScoreUnit string                // zset: ScoreMillis or ScoreSeconds
	Template  *keytemplate.Template // set: captures {period}
	Period    string                // set: the {period} capture's Go time layout
}

// Spec is a ledger keyspace as configured; zero values take the
// preset's defaults.
type Spec struct {
	Name        string
	Preset      string
	Match       string
	Window      time.Duration
	ScoreUnit   string
	KeyTemplate string
	Period      string
}

// New fills unset settings from the preset and checks them.
func New(sp Spec) (*Ledger, error) {
	p, ok := PresetByName(sp.Preset)
	if !ok {
		return nil, fmt.Errorf("ledger %s: unknown ledger preset %q (known: %s)", sp.Name, sp.Preset, strings.Join(PresetNames(), ", "))
	}
	l := &Ledger{Name: sp.Name, Match: cmp.Or(sp.Match, p.Match), Shape: p.Name, Window: p.Window,
		ScoreUnit: cmp.Or(sp.ScoreUnit, p.ScoreUnit), Period: cmp.Or(sp.Period, p.Period)}
	if sp.Window > 0 {
		l.Window = sp.Window
	}
	if l.Window <= 0 {
		return nil, fmt.Errorf("ledger %s: window must be positive", sp.Name)
	}
	if l.Shape == ZSetWindow {
		if !slices.Contains([]string{ScoreMillis, ScoreSeconds}, l.ScoreUnit) {
			return nil, fmt.Errorf("ledger %s: score_unit %q: want ms or s", sp.Name, l.ScoreUnit)
		}
		if sp.KeyTemplate != "" || sp.Period != "" {
			return nil, fmt.Errorf("ledger %s: key_template and period belong to set-per-period ledgers, not zset-window", sp.Name)
		}
		return l, nil
	}
	if sp.ScoreUnit != "" {
		return nil, fmt.Errorf("ledger %s: score_unit belongs to zset-window ledgers, not set-per-period", sp.Name)
	}
	return l, l.compilePeriod(cmp.Or(sp.KeyTemplate, p.KeyTemplate))
}

// compilePeriod checks a set-per-period ledger's template and layout.
func (l *Ledger) compilePeriod(tpl string) error {
	t, err := keytemplate.Parse(tpl)
	if err != nil {
		return fmt.Errorf("ledger %s: %v", l.Name, err)
	}
	if !slices.Contains(t.Names(), "period") {
		return fmt.Errorf("ledger %s: key template %q must capture {period}", l.Name, tpl)
	}
	l.Template = t
	ref := time.Date(2026, 12, 7, 15, 4, 5, 0, time.UTC)
	if _, err := time.Parse(l.Period, ref.Format(l.Period)); err != nil || ref.Format(l.Period) == l.Period {
		return fmt.Errorf("ledger %s: period %q is not a Go time layout such as 2006-01-02 or 2006-01-02T15", l.Name, l.Period)
	}
	return nil
}

// periodOf reads a set's period from its key name: its start and end,
// ok=false when the key does not fit the template or the layout.
func (l *Ledger) periodOf(key string) (start, end time.Time, value string, ok bool) {
	groups, fit := l.Template.Match(key)
	if !fit {
		return start, end, "", false
	}
	value = groups[slices.Index(l.Template.Names(), "period")]
	start, err := time.Parse(l.Period, value)
	if err != nil {
		return start, end, value, false
	}
	return start, periodEnd(start, l.Period), value, true
}

// periodEnd is the first instant the layout formats differently from
// start: the period's end, whatever unit the layout counts in.
func periodEnd(start time.Time, layout string) time.Time {
	steps := []func(time.Time) time.Time{
		func(t time.Time) time.Time { return t.Add(time.Minute) },
		func(t time.Time) time.Time { return t.Add(time.Hour) },
		func(t time.Time) time.Time { return t.AddDate(0, 0, 1) },
		func(t time.Time) time.Time { return t.AddDate(0, 1, 0) },
		func(t time.Time) time.Time { return t.AddDate(1, 0, 0) },
	}
	for _, step := range steps {
		if e := step(start); e.Format(layout) != start.Format(layout) {
			return e
		}
	}
	return start.AddDate(1, 0, 0)
}

// scoreAt converts a time in ms since the epoch to the ledger's score unit.
func (l *Ledger) scoreAt(ms int64) float64 {
	if l.ScoreUnit == ScoreSeconds {
		return float64(ms) / 1000
	}
	return float64(ms)
}

// msOfScore converts a score to ms since the epoch.
func (l *Ledger) msOfScore(score float64) int64 {
	if l.ScoreUnit == ScoreSeconds {
		return int64(score * 1000)
	}
	return int64(score)
}

// redisType is the key type SCAN TYPE filters on.
func (l *Ledger) redisType() string {
	if l.Shape == ZSetWindow {
		return "zset"
	}
	return "set"
}
