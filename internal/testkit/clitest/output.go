package clitest

import (
	"encoding/json"
	"testing"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/internal/appsim"
)

// SeedOut is what seed prints: what it wrote and what stats must report.
type SeedOut struct {
	Kinds             map[string]int64 `json:"kinds"`
	ConflictsRejected int64            `json:"conflicts_rejected"`
	Expected          appsim.Expected  `json:"expected"`
}

// StatsOut is the part of stats -o json the tests compare.
type StatsOut struct {
	Total   int64            `json:"total"`
	ByState map[string]int64 `json:"by_state"`
	Stale   int64            `json:"stale"`
	Flags   map[string]int64 `json:"flags"`
	Memory  struct {
		Total        int64 `json:"total"`
		KnownRecords int64 `json:"known_records"`
	} `json:"memory_bytes"`
	Groups map[string]struct {
		Distinct int64 `json:"distinct"`
		Top      []struct {
			Value string `json:"value"`
			Count int64  `json:"count"`
		} `json:"top"`
	} `json:"groups"`
	Complete bool `json:"complete"`
	Coverage []struct {
		Keyspace string `json:"keyspace"`
		ReadPath string `json:"read_path"`
	} `json:"coverage"`
}

// TriageOut is triage -o json.
type TriageOut struct {
	Records []struct {
		Key, Keyspace, Verdict, Action, Ref, Detail, Why string
		Status                                           int
	} `json:"records"`
	Verdicts map[string]int   `json:"verdicts"`
	Written  bool             `json:"written"`
	Results  []actions.Result `json:"results"`
	Summary  map[string]int   `json:"summary"`
}

// ParseTriage reads a triage -o json run's report.
func ParseTriage(t testing.TB, r Result) TriageOut {
	t.Helper()
	var out TriageOut
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatalf("triage -o json: %v\n%s\nstderr: %s", err, r.Stdout, r.Stderr)
	}
	return out
}
