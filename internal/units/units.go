// Package units reads and writes the quantities people type and see:
// durations and byte sizes in flags and config (here), and their display
// forms with TTLs, counts and clipped text (format.go, text.go).
//
// Floor 0 of ARCHITECTURE.md, a foundation: it imports no idemctl package
// but other foundations.
package units

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Duration is a time.Duration that reads "30s", "5m", "1h30m", "2d" or a bare
// number of seconds.
type Duration time.Duration

// ParseDuration accepts Go durations plus a "d" (day) suffix and bare seconds.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty duration")
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 {
			return 0, fmt.Errorf("negative duration %q", s)
		}
		return time.Duration(n) * time.Second, nil
	}
	if strings.HasSuffix(s, "d") {
		n, err := strconv.ParseFloat(strings.TrimSuffix(s, "d"), 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("bad duration %q (want e.g. 30s, 5m, 2h, 1d)", s)
		}
		return time.Duration(n * float64(24*time.Hour)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("bad duration %q (want e.g. 30s, 5m, 2h, 1d)", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("negative duration %q", s)
	}
	return d, nil
}

// UnmarshalYAML reads a duration scalar; the document's decoder
// (internal/yamldoc) puts the line and key before the error.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	return decodeScalar(n, "a duration such as 30s or 5m", ParseDuration, func(v time.Duration) { *d = Duration(v) })
}

// decodeScalar parses a YAML scalar with parse and hands the value to set;
// a mapping or list where the scalar belongs is named with what is wanted.
func decodeScalar[T any](n *yaml.Node, want string, parse func(string) (T, error), set func(T)) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("want %s", want)
	}
	v, err := parse(n.Value)
	if err != nil {
		return err
	}
	set(v)
	return nil
}

// D returns the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// ByteSize is a size in bytes that reads "16384", "16KiB", "16KB", "1MiB".
type ByteSize int64

var sizeSuffixes = []struct {
	s string
	m int64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30},
	{"kb", 1000}, {"mb", 1000 * 1000}, {"gb", 1000 * 1000 * 1000},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"b", 1},
}

// ParseShare reads a share of a whole: 1% or 0.01, strictly between 0
// and 1.
func ParseShare(s string) (float64, error) {
	t, pct := strings.CutSuffix(strings.TrimSpace(s), "%")
	v, err := strconv.ParseFloat(t, 64)
	if pct {
		v /= 100
	}
	if err != nil || !(v > 0 && v < 1) {
		return 0, fmt.Errorf("want a share between 0 and 1 such as 1%% or 0.01, not %q", s)
	}
	return v, nil
}

// ParseByteSize parses a byte size with an optional unit suffix.
func ParseByteSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, suf := range sizeSuffixes {
		if strings.HasSuffix(t, suf.s) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, suf.s)), suf.m
			break
		}
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad size %q (want e.g. 16384, 16KiB, 1MiB)", s)
	}
	return int64(n * float64(mult)), nil
}

// UnmarshalYAML reads a size scalar; the document's decoder puts the line
// and key before the error.
func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	return decodeScalar(n, "a size such as 16KiB", ParseByteSize, func(v int64) { *b = ByteSize(v) })
}

// ConfigDuration writes d the way a config file or flag takes it, shortest
// first: 6h, 90m, 45s, 1h30m (never Go's "6h0m0s").
func ConfigDuration(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
