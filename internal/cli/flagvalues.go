package cli

import (
	"time"

	"github.com/idemctl/idemctl/internal/units"
)

// durationValue is a pflag.Value accepting 30s, 5m, 2h, 1d or bare seconds.
type durationValue struct{ d *time.Duration }

func (v durationValue) String() string {
	if v.d == nil || *v.d == 0 {
		return ""
	}
	return v.d.String()
}
func (v durationValue) Set(s string) error {
	d, err := units.ParseDuration(s)
	if err != nil {
		return err
	}
	*v.d = d
	return nil
}
func (v durationValue) Type() string { return "duration" }

// sizeValue is a pflag.Value accepting 16384, 16KiB, 1MiB.
type sizeValue struct{ n *int64 }

func (v sizeValue) String() string {
	if v.n == nil || *v.n == 0 {
		return ""
	}
	return units.FormatBytes(*v.n)
}
func (v sizeValue) Set(s string) error {
	n, err := units.ParseByteSize(s)
	if err != nil {
		return err
	}
	*v.n = n
	return nil
}
func (v sizeValue) Type() string { return "bytes" }

func firstDur(a, b time.Duration) time.Duration {
	if a > 0 {
		return a
	}
	return b
}
