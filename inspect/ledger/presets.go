package ledger

import "time"

// Preset is a built-in shape of dedupe ledger with its defaults.
type Preset struct {
	Name        string
	Description string
	Match       string
	KeyTemplate string        // set-per-period: must capture {period}
	Window      time.Duration // how long an entry is meant to be kept
	ScoreUnit   string        // zset-window
	Period      string        // set-per-period: Go time layout of {period}
}

// ledgerPresets are the two common shapes. The windows are a day for a
// trimmed zset (a producer's usual redelivery horizon) and two days for
// daily sets (today's set and yesterday's are both live).
var ledgerPresets = []Preset{
	{Name: SetPerPeriod, Description: "dedupe ledger: one set of processed event IDs per consumer per day (SADD + EXPIRE)",
		Match: "processed:*", KeyTemplate: "processed:{consumer}:{period}", Window: 48 * time.Hour, Period: "2006-01-02"},
	{Name: ZSetWindow, Description: "dedupe ledger: a sorted set of processed event IDs scored by processing time in ms, trimmed to a window",
		Match: "dedupe:*", Window: 24 * time.Hour, ScoreUnit: ScoreMillis},
}

// Presets lists the built-in ledger presets, sorted by name.
func Presets() []Preset { return append([]Preset(nil), ledgerPresets...) }

// PresetByName returns one built-in ledger preset.
func PresetByName(name string) (Preset, bool) {
	for _, p := range ledgerPresets {
		if p.Name == name {
			return p, true
		}
	}
	return Preset{}, false
}

// PresetNames lists the ledger presets' names, sorted.
func PresetNames() []string {
	out := make([]string, len(ledgerPresets))
	for i, p := range ledgerPresets {
		out[i] = p.Name
	}
	return out
}
