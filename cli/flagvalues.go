package cli

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/internal/units"
)

// parsedValue is a pflag.Value read by parse and shown by format (empty
// for the zero value, so help shows no default where none is set).
type parsedValue[T comparable] struct {
	p      *T
	parse  func(string) (T, error)
	format func(T) string
	kind   string // the type help shows: duration, bytes
}

func (v parsedValue[T]) String() string {
	var zero T
	if v.p == nil || *v.p == zero {
		return ""
	}
	return v.format(*v.p)
}

func (v parsedValue[T]) Set(s string) error {
	x, err := v.parse(s)
	if err != nil {
		return err
	}
	*v.p = x
	return nil
}

func (v parsedValue[T]) Type() string { return v.kind }

// durationValue accepts 30s, 5m, 2h, 1d or bare seconds.
func durationValue(d *time.Duration) pflag.Value {
	return parsedValue[time.Duration]{d, units.ParseDuration, time.Duration.String, "duration"}
}

// shareValue accepts a share of a whole: 1%, 0.5%, 0.01 (0 < share < 1).
func shareValue(p *float64) pflag.Value {
	return parsedValue[float64]{p, units.ParseShare, func(v float64) string { return strconv.FormatFloat(v*100, 'g', -1, 64) + "%" }, "share"}
}

// sizeValue accepts 16384, 16KiB, 1MiB.
func sizeValue(n *int64) pflag.Value {
	return parsedValue[int64]{n, units.ParseByteSize, units.FormatBytes, "bytes"}
}

// choiceValue accepts one of choices.
func choiceValue(p *string, choices []string) pflag.Value {
	parse := func(s string) (string, error) {
		if !slices.Contains(choices, s) {
			return "", fmt.Errorf("want %s", strings.Join(choices, ", "))
		}
		return s, nil
	}
	return parsedValue[string]{p, parse, func(s string) string { return s }, strings.Join(choices, "|")}
}

func firstDur(a, b time.Duration) time.Duration {
	if a > 0 {
		return a
	}
	return b
}
