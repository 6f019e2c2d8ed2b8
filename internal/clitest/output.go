package clitest

import "github.com/idemctl/idemctl/appsim"

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
}
