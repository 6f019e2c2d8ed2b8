package main

import (
	"fmt"
	"slices"
	"strings"
)

// always are the steps every run takes: the keyspace, checked, and saved
// to the seed cache when asked.
var always = map[string]bool{"seed": true, "verify": true, "cache": true}

// selectable are the steps -only can name, in the order they run.
var selectable = []string{"rounds", "rss", "load", "tui", "records", "gobench", "sampling", "snapshot", "servercost", "writes"}

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
