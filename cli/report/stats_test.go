package report

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

// A keyspace name of 60 characters widens its column for every row: the
// counts after it stay right-aligned under their header, and MATCH starts
// at one offset on every line; with short names the table reads as it
// always did.
func TestStatsTableKeepsColumnsForALongName(t *testing.T) {
	long := strings.Repeat("k", 60)
	r := inspect.Report{
		Keyspaces: []inspect.KeyspaceReport{
			{Name: "orders", Match: "ord:*", ByState: map[string]int64{"processing": 3, "succeeded": 1234567}, Stale: 2, MemoryBytes: 2048},
			{Name: long, Match: "long:*", ByState: map[string]int64{"failed": 5}, MemoryBytes: 1 << 30},
		},
		Coverage: []inspect.CoverageReport{
			{Keyspace: "orders", Keys: 10, Complete: true},
			{Keyspace: long, Keys: 20, Complete: true, Node: "10.0.0.1:6379"},
		},
	}
	var b strings.Builder
	writeStatsKeyspaces(&b, r)
	lines := strings.Split(strings.Trim(b.String(), "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "KEYSPACE ") || !strings.HasPrefix(lines[2], long+" ") {
		t.Fatalf("table:\n%s", b.String())
	}
	for col := 1; col <= 8; col++ {
		end := col < 8 // the counts are right-aligned: where each ends; MATCH, where it starts
		want := fieldOffset(lines[0], col, end)
		for _, line := range lines[1:] {
			if at := fieldOffset(line, col, end); at != want {
				t.Errorf("column %d is at %d in %q, at %d in the header:\n%s", col, at, line, want, b.String())
			}
		}
	}

	b.Reset()
	writeStatsKeyspaces(&b, inspect.Report{Keyspaces: r.Keyspaces[:1]})
	// as the fixed-width format printed it
	want := "\nKEYSPACE             PROCESSING  SUCCEEDED  FAILED  RECONCILED  UNKNOWN  STALE      MEMORY  MATCH\n" +
		fmt.Sprintf("%-20s %10s %10s %7s %11s %8s %6s %11s  %s\n", "orders", "3", "1,234,567", "0", "0", "0", "2", units.FormatBytes(2048), "ord:*")
	if b.String() != want {
		t.Errorf("short names:\n%q\nwant\n%q", b.String(), want)
	}

	// the states and flags tables, as the fixed-width format printed them
	b.Reset()
	short := inspect.Report{ByState: map[string]int64{"processing": 600}, Flags: map[string]int64{"no_ttl": 60}}
	short.MemoryBytes.ByState = map[string]int64{"processing": 136192}
	writeStatsStates(&b, short)
	writeStatsFlags(&b, short)
	noTTL := inspect.AllFlags()[slices.IndexFunc(inspect.AllFlags(), func(f inspect.FlagInfo) bool { return f.Name == "no_ttl" })]
	want = "\nSTATE        RECORDS      MEMORY\n" + fmt.Sprintf("%-12s %8s %11s\n", "processing", "600", units.FormatBytes(136192)) +
		"\nFLAG                 RECORDS\n" + fmt.Sprintf("%-20s %8s  %s\n", "no_ttl", "60", noTTL.Explain)
	if b.String() != want {
		t.Errorf("states and flags:\n%s\nwant\n%s", b.String(), want)
	}

	b.Reset()
	writeStatsCoverage(&b, r)
	cov := strings.Split(strings.Trim(b.String(), "\n"), "\n")
	if i, j := strings.Index(cov[1], ": 10 keys"), strings.Index(cov[2], " on 10.0.0.1"); i != j || i != 2+60 {
		t.Errorf("coverage: the text after the name starts at %d and %d:\n%s", i, j, b.String())
	}
}

// fieldOffset is where the n-th space-separated field of line ends (end)
// or starts.
func fieldOffset(line string, n int, end bool) int {
	i := 0
	for f := 0; ; f++ {
		for i < len(line) && line[i] == ' ' {
			i++
		}
		start := i
		for i < len(line) && line[i] != ' ' {
			i++
		}
		if f == n {
			if end {
				return len([]rune(line[:i]))
			}
			return len([]rune(line[:start]))
		}
		if i >= len(line) {
			return -1
		}
	}
}
