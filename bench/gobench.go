package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/idemctl/idemctl/internal/units"
)

// GoBench is one line of `go test -bench` output.
type GoBench struct {
	Package     string  `json:"package"`
	Name        string  `json:"name"`
	NsPerOp     float64 `json:"ns_per_op"`
	BytesPerOp  int64   `json:"bytes_per_op"`
	AllocsPerOp int64   `json:"allocs_per_op"`
	MBPerS      float64 `json:"mb_per_s,omitempty"`
}

// goBenchPackages hold the decoding/classification and rendering benchmarks.
var goBenchPackages = []string{"./inspect", "./ui"}

func (h *harness) goBench(ctx context.Context) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	args := append([]string{"test", "-run", "^$", "-bench", ".", "-benchmem", "-count", "1"}, goBenchPackages...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	// The held-record benchmarks hold N records in the 10M mode (1M otherwise).
	if h.cfg.N >= TenM {
		cmd.Env = append(os.Environ(), "IDEMCTL_BENCH_HELD="+strconv.Itoa(h.cfg.N))
	}
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, tail(string(out), 3000))
	}
	h.res.GoBench = parseGoBench(string(out))
	h.cfg.logf("go benchmarks: %d results in %v", len(h.res.GoBench), time.Since(start).Round(time.Second))
	return nil
}

// parseGoBench reads benchmark lines, attributing them to the package named
// by the `pkg:` line before them.
func parseGoBench(out string) []GoBench {
	var (
		res []GoBench
		pkg string
	)
	for _, line := range strings.Split(out, "\n") {
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimPrefix(strings.TrimSpace(p), "github.com/idemctl/idemctl/")
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		b := GoBench{Package: pkg, Name: f[0]}
		for i := 2; i+1 < len(f); i += 2 {
			v, unit := f[i], f[i+1]
			switch unit {
			case "ns/op":
				b.NsPerOp, _ = strconv.ParseFloat(v, 64)
			case "B/op":
				b.BytesPerOp, _ = strconv.ParseInt(v, 10, 64)
			case "allocs/op":
				b.AllocsPerOp, _ = strconv.ParseInt(v, 10, 64)
			case "MB/s":
				b.MBPerS, _ = strconv.ParseFloat(v, 64)
			}
		}
		res = append(res, b)
	}
	return res
}

// markdownGoBench is the Go benchmarks' table.
func (r *Results) markdownGoBench(p func(string, ...any)) {
	if len(r.GoBench) > 0 {
		p("\n| Go benchmark | ns/op | B/op | allocs/op | MB/s |\n|---|---:|---:|---:|---:|\n")
		for _, g := range r.GoBench {
			mbs := ""
			if g.MBPerS > 0 {
				mbs = fmt.Sprintf("%.1f", g.MBPerS)
			}
			p("| %s %s | %.1f | %d | %d | %s |\n", g.Package, g.Name, g.NsPerOp, g.BytesPerOp, g.AllocsPerOp, mbs)
		}
	}
}

// evaluateTUIBench checks the TUI's frame and filter times from the Go
// benchmarks (the held-record ones in the 10M mode).
func (r *Results) evaluateTUIBench(add func(Target)) {
	render := Target{Name: "TUI frame with 1M records", Want: "≤ 2 ms", Got: "not measured (-gobench)"}
	filter := Target{Name: "TUI filter over every held record", Want: "≤ 1 s", Got: "not measured (-gobench)"}
	for _, b := range r.GoBench {
		held, isHeld := strings.CutPrefix(b.Name, "BenchmarkRenderHeld/")
		switch {
		case strings.HasPrefix(b.Name, "BenchmarkRender1M") && r.N < TenM,
			isHeld && r.N >= TenM:
			render.Got = fmt.Sprintf("%.3f ms, %d allocs (%s, 120×40)", b.NsPerOp/1e6, b.AllocsPerOp, b.Name)
			render.Met, render.Measured = b.NsPerOp <= 2e6, true
			if isHeld {
				render.Name = "TUI frame with " + heldCount(held) + " records"
			}
		case strings.HasPrefix(b.Name, "BenchmarkFilterHeld/"):
			filter.Name = "TUI filter over " + heldCount(strings.TrimPrefix(b.Name, "BenchmarkFilterHeld/")) + " held records"
			filter.Got = fmt.Sprintf("%.0f ms (%s: key substring, view rebuilt and sorted)", b.NsPerOp/1e6, b.Name)
			filter.Met, filter.Measured = b.NsPerOp <= 1e9, r.N >= TenM
			if r.N < TenM {
				filter.Note = "the target is on 10M records (-n 10000000)"
			}
		}
	}
	add(render)
	add(filter)
}

// heldCount is a benchmark's record count (its sub-benchmark name, with the
// -GOMAXPROCS suffix) with thousands separators.
func heldCount(name string) string {
	n, _, _ := strings.Cut(name, "-")
	v, err := strconv.ParseInt(n, 10, 64)
	if err != nil {
		return n
	}
	return units.FormatCount(v)
}
