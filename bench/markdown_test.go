package main

import (
	"strings"
	"testing"
	"time"
)

// A run of -only servercost reports that step, without the empty tables of
// the rounds it did not run.
func TestMarkdownOnlyWhatRan(t *testing.T) {
	r := &Results{N: 1000, Rounds: 1, ServerCost: &ServerCost{Tools: []*ToolCost{
		{Key: "idle", Label: "no tool running", CPU: []time.Duration{time.Millisecond}, Wall: []time.Duration{0}, PingP99: []time.Duration{time.Millisecond}},
		{Key: "memkeys", Label: "redis-cli --memkeys", Keys: 1000, CPU: []time.Duration{9 * time.Millisecond}, Wall: []time.Duration{time.Second}, PingP99: []time.Duration{time.Millisecond}},
	}}}
	md := r.Markdown()
	for _, absent := range []string{"| variant |", "Baseline: ", "server work per key"} {
		if strings.Contains(md, absent) {
			t.Errorf("report of a server-cost-only run has %q:\n%s", absent, md)
		}
	}
	for _, want := range []string{"| no tool running | – | – | – | 1.00 |", "| redis-cli --memkeys | 9.00 | 1.00 | 1.000 | 1.00 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}
