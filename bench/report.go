package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/idemctl/idemctl/internal/appsim"
)

// Results is everything one harness run measured.
type Results struct {
	N            int           `json:"n"`
	Commit       string        `json:"commit"`
	Rounds       int           `json:"rounds"`
	Smoke        bool          `json:"smoke"`
	Started      time.Time     `json:"started"`
	Duration     time.Duration `json:"duration_ns"`
	CPUs         int           `json:"cpus"`
	GoVersion    string        `json:"go_version"`
	RedisVersion string        `json:"redis_version"`
	RedisCLI     string        `json:"redis_cli"`
	LoadAvgStart string        `json:"loadavg_start"`
	Pinning      string        `json:"pinning,omitempty"` // where the load phases ran ("" not pinned)
	// ProbeRealTime says whether the load phases' probe ran on a real-time
	// thread ("yes", or "no: " and why).
	ProbeRealTime string           `json:"probe_real_time,omitempty"`
	LoadAvgEnd    string           `json:"loadavg_end"`
	QuietWaited   time.Duration    `json:"quiet_waited_ns"` // total time spent waiting for other processes to calm down
	NotQuiet      int              `json:"not_quiet"`       // timed runs started although the machine stayed busy
	Retried       int              `json:"retried"`         // samples redone because other processes took CPU meanwhile
	Seed          SeedInfo         `json:"seed"`
	NDJSONBytes   int64            `json:"ndjson_bytes"`
	Variants      []*VariantResult `json:"variants"`
	RSS           []RSSPoint       `json:"rss"`
	Load          []LoadPhase      `json:"load,omitempty"`
	TUI           *TUIResult       `json:"tui,omitempty"`
	RecordMemory  *RecordMemory    `json:"record_memory,omitempty"`
	GoBench       []GoBench        `json:"go_bench,omitempty"`
	Writes        *WriteResult     `json:"writes,omitempty"`
	Sampling      *SampleResult    `json:"sampling,omitempty"`
	Snapshot      *SnapshotResult  `json:"snapshot,omitempty"`
	ServerCost    *ServerCost      `json:"server_cost,omitempty"`
	Ledger        *LedgerResult    `json:"ledger,omitempty"`
	Follow        *FollowResult    `json:"follow,omitempty"`
	Steps         []StepTime       `json:"steps"` // each step's time, and what was estimated
	Targets       []Target         `json:"targets"`
}

// SeedInfo is how the keyspace was filled.
type SeedInfo struct {
	Duration      time.Duration         `json:"duration_ns"`
	RecordsPerSec float64               `json:"records_per_sec"`
	UsedMemory    int64                 `json:"redis_used_memory"`
	Kinds         map[appsim.Kind]int64 `json:"kinds"`
	Expected      appsim.Expected       `json:"expected"`
	Cache         *CacheInfo            `json:"cache,omitempty"` // -seed-cache
}

// VariantResult is one contender over all rounds.
type VariantResult struct {
	Key     string   `json:"key"`
	Label   string   `json:"label"`
	Command string   `json:"command"`
	Samples []Sample `json:"samples"`
	// Commands is the server's work in the last round, by command.
	Commands map[string]CmdStat `json:"commands,omitempty"`
}

// Median wall time.
func (v *VariantResult) Median() time.Duration {
	var d []time.Duration
	for _, s := range v.Samples {
		d = append(d, s.Wall)
	}
	return medianDur(d)
}

func (v *VariantResult) medianOf(f func(Sample) int64) int64 {
	var d []time.Duration
	for _, s := range v.Samples {
		d = append(d, time.Duration(f(s)))
	}
	return int64(medianDur(d))
}

func (v *VariantResult) medianRSS() int64 {
	return v.medianOf(func(s Sample) int64 { return s.MaxRSSKB })
}

// KeysPerSec at the median wall time.
func (v *VariantResult) KeysPerSec() float64 {
	m := v.Median()
	if m <= 0 || len(v.Samples) == 0 {
		return 0
	}
	return float64(v.Samples[0].Keys) / m.Seconds()
}

// RSSPoint is a command's peak RSS at one record count.
type RSSPoint struct {
	Command  string        `json:"command"`
	N        int           `json:"n"`
	MaxRSSKB int64         `json:"max_rss_kb"`
	Wall     time.Duration `json:"wall_ns"`
}

// Target is one of the targets and whether this run met it.
type Target struct {
	Name     string `json:"name"`
	Want     string `json:"want"`
	Got      string `json:"got"`
	Met      bool   `json:"met"`
	Measured bool   `json:"measured"` // false: not measured in this run (skipped or N too small)
	Note     string `json:"note,omitempty"`
}

func medianDur(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func (r *Results) variant(key string) *VariantResult {
	for _, v := range r.Variants {
		if v.Key == key {
			return v
		}
	}
	return nil
}

func (r *Results) rssAt(cmd string, n int) (int64, bool) {
	for _, p := range r.RSS {
		if p.Command == cmd && p.N == n {
			return p.MaxRSSKB, true
		}
	}
	return 0, false
}

// ratio is a/b of two medians.
func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return a.Seconds() / b.Seconds()
}

func mb(kb int64) float64 { return float64(kb) / 1024 }

// AllMet reports whether every measured target was met.
func (r *Results) AllMet() bool {
	for _, t := range r.Targets {
		if t.Measured && !t.Met {
			return false
		}
	}
	return true
}

// WriteFile writes the report: JSON for a .json path, markdown otherwise.
func (r *Results) WriteFile(path string) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	var data []byte
	if strings.HasSuffix(path, ".json") {
		var err error
		if data, err = json.MarshalIndent(r, "", "  "); err != nil {
			return err
		}
		data = append(data, '\n')
	} else {
		data = []byte(r.Markdown())
	}
	return os.WriteFile(path, data, 0o644)
}
