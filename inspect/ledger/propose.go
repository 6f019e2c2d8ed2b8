package ledger

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

// Proposal is detect's proposal of a dedupe-ledger keyspace, for a
// sample of zsets scored by epoch times or of sets named for a period.
type Proposal struct {
	Preset      string   `json:"preset"`
	ScoreUnit   string   `json:"score_unit,omitempty"`
	KeyTemplate string   `json:"key_template,omitempty"`
	Period      string   `json:"period,omitempty"`
	Evidence    []string `json:"evidence"`
}

// ledgerSample bounds the keys whose scores detect reads: two one-member
// ZRANGEs a key, never a member list.
const ledgerSample = 50

// periodLayouts are the key-name periods detect recognises.
var periodLayouts = []string{"2006-01-02T15", "2006-01-02", "2006010215", "20060102", "2006-01"}

// Propose proposes the ledger shape of sampled keys that are mostly
// zsets or sets: zset-window when most zsets are scored by epoch times,
// set-per-period when most sets are named for a period; nil otherwise.
func Propose(ctx context.Context, c redis.UniversalClient, keys []string) *Proposal {
	zsets, sets, err := keysByType(ctx, c, keys)
	if err != nil {
		return nil
	}
	if len(zsets) >= len(sets) {
		return proposeZSetLedger(ctx, c, zsets[:min(len(zsets), ledgerSample)])
	}
	return proposeSetLedger(sets)
}

func keysByType(ctx context.Context, c redis.UniversalClient, keys []string) (zsets, sets []string, err error) {
	pipe := c.Pipeline()
	cmds := make([]*redis.StatusCmd, len(keys))
	for i, k := range keys {
		cmds[i] = pipe.Type(ctx, k)
	}
	if err := inspect.ExecPipe(ctx, pipe); err != nil {
		return nil, nil, err
	}
	for i, k := range keys {
		switch cmds[i].Val() {
		case "zset":
			zsets = append(zsets, k)
		case "set":
			sets = append(sets, k)
		}
	}
	return zsets, sets, nil
}

// proposeZSetLedger reads each zset's lowest and highest score and
// proposes zset-window when most are epoch times, in ms or in s.
func proposeZSetLedger(ctx context.Context, c redis.UniversalClient, zsets []string) *Proposal {
	pipe := c.Pipeline()
	timeCmd := pipe.Time(ctx)
	lo, hi := make([]*redis.ZSliceCmd, len(zsets)), make([]*redis.ZSliceCmd, len(zsets))
	for i, k := range zsets {
		lo[i], hi[i] = pipe.ZRangeWithScores(ctx, k, 0, 0), pipe.ZRangeWithScores(ctx, k, -1, -1)
	}
	nowMs, err := inspect.ExecTimed(ctx, pipe, timeCmd)
	if err != nil {
		return nil
	}
	byUnit := map[string]int{}
	var oldest int64
	for i := range zsets {
		a, b := lo[i].Val(), hi[i].Val()
		if len(a) == 0 || len(b) == 0 {
			continue
		}
		for _, u := range []string{ScoreMillis, ScoreSeconds} {
			l := Ledger{ScoreUnit: u}
			if from, to := l.msOfScore(a[0].Score), l.msOfScore(b[0].Score); from >= minLedgerMs && to <= nowMs+aheadMs {
				byUnit[u]++
				oldest = max(oldest, nowMs-from)
				break
			}
		}
	}
	unit := ScoreMillis
	if byUnit[ScoreSeconds] > byUnit[ScoreMillis] {
		unit = ScoreSeconds
	}
	if byUnit[unit]*2 < len(zsets) {
		return nil
	}
	return &Proposal{Preset: ZSetWindow, ScoreUnit: unit, Evidence: []string{
		fmt.Sprintf("%d of %d sampled zsets are scored by epoch times in %s (lowest and highest score read)", byUnit[unit], len(zsets), unit),
		fmt.Sprintf("oldest entry %s old: set window to the trim's window, at least the producer's redelivery horizon", units.FormatMs(oldest)),
	}}
}

// proposeSetLedger proposes set-per-period when most sets' names end in
// a period: the template captures it, and the segments that vary.
func proposeSetLedger(sets []string) *Proposal {
	var layout string
	var dated []string
	for _, l := range periodLayouts {
		var fit []string
		for _, k := range sets {
			seg := k[strings.LastIndexByte(k, ':')+1:]
			if _, err := time.Parse(l, seg); err == nil && len(seg) == len(l) {
				fit = append(fit, k)
			}
		}
		if len(fit) > len(dated) {
			layout, dated = l, fit
		}
	}
	if len(dated)*2 < len(sets) || len(dated) == 0 {
		return nil
	}
	tpl := periodTemplate(dated)
	return &Proposal{Preset: SetPerPeriod, KeyTemplate: tpl, Period: layout, Evidence: []string{
		fmt.Sprintf("%d of %d sampled sets are named for a period (%s): key template %s", len(dated), len(sets), layout, tpl),
	}}
}

// periodTemplate keeps the segments all keys share and captures the rest:
// the first as {consumer}, others as {part2}, {part3} …, the last as {period}.
func periodTemplate(keys []string) string {
	first := strings.Split(keys[0], ":")
	same := make([]bool, len(first))
	for i := range same {
		same[i] = true
	}
	for _, k := range keys[1:] {
		segs := strings.Split(k, ":")
		for i := range first {
			if len(segs) != len(first) || segs[i] != first[i] {
				same[i] = false
			}
		}
	}
	out, captured := make([]string, len(first)), 0
	for i, s := range first {
		switch {
		case i == len(first)-1:
			out[i] = "{period}"
		case same[i] && s != "" && !strings.ContainsAny(s, "{}"):
			out[i] = s
		case captured == 0:
			out[i], captured = "{consumer}", 1
		default:
			captured++
			out[i] = fmt.Sprintf("{part%d}", captured)
		}
	}
	return strings.Join(out, ":")
}

// YAML is the proposed keyspace block.
func (p *Proposal) YAML(pattern string) string {
	y := fmt.Sprintf("keyspaces:\n  - name: ledger\n    kind: ledger\n    match: %s\n    preset: %s\n", inspect.YAMLQuote(pattern), p.Preset)
	if p.ScoreUnit != "" {
		y += "    score_unit: " + p.ScoreUnit + "\n    window: 24h\n"
	} else {
		y += fmt.Sprintf("    key_template: %s\n    period: %s\n    window: 48h\n", inspect.YAMLQuote(p.KeyTemplate), inspect.YAMLQuote(p.Period))
	}
	return y
}
