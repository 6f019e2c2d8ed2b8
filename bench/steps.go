package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// always are the steps every run takes: the keyspace, checked, and saved
// to the seed cache when asked.
var always = map[string]bool{"seed": true, "verify": true, "cache": true}

// selectable are the steps -only can name, in the order they run.
var selectable = []string{"rounds", "rss", "load", "tui", "records", "gobench", "sampling", "snapshot", "servercost", "ledger", "follow", "writes"}

// parseOnly reads -only: nil when empty (every step that is on runs).
// Naming a step runs it even if its own flag is off.
func parseOnly(list string) (map[string]bool, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	out := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		switch {
		case name == "" || always[name]:
			continue // seed and verify run anyway
		case !slices.Contains(selectable, name):
			return nil, fmt.Errorf("-only: unknown step %q (steps: %s)", name, strings.Join(selectable, ", "))
		}
		out[name] = true
	}
	return out, nil
}

// step is one part of a run: on when its flag asks for it.
type step struct {
	name string
	on   bool
	fn   func(context.Context) error
}

// steps are the run's steps in the order they run.
func (h *harness) steps() []step {
	cfg := h.cfg
	return []step{
		{"seed", true, h.seed},
		{"verify", true, h.verify},
		{"cache", cfg.SeedCache != "", h.saveCache}, // once verified
		{"rounds", true, h.rounds},
		{"rss", true, h.rssScaling},
		{"load", cfg.Load, h.load},
		{"tui", cfg.TUI, h.tui},
		{"records", cfg.Records, h.records},
		{"gobench", cfg.GoBench, h.goBench},
		{"sampling", cfg.Sampling, h.sampling},
		{"snapshot", cfg.Snapshot, h.snapshot},
		{"servercost", cfg.ServerCost, h.serverCost},
		{"ledger", cfg.Ledger, h.ledger}, // ledger.go
		{"follow", cfg.Follow, h.follow}, // follow.go: adds the simulator's records
		{"writes", cfg.Writes, h.writes}, // last: it changes records
	}
}

// stepFilter says whether a step runs: its flag, or -only naming it.
func stepFilter(steps []step, only map[string]bool) func(string) bool {
	return func(name string) bool {
		for _, s := range steps {
			if s.name == name {
				return s.on && (only == nil || always[name]) || only[name]
			}
		}
		return false
	}
}
