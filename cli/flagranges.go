package cli

import (
	"math"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/exporter"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

type flagRange struct{ lo, hi float64 }

// flagRanges bounds every numeric flag, by "command flag" where the same
// name means different things, else by flag name. A value outside is a
// one-line usage error before anything runs, never an allocation of that
// size or a broken ticker.
var flagRanges = map[string]flagRange{
	"count":                 {1, inspect.MaxScanCount},
	"seed count":            {1, 10_000_000},
	"demo count":            {1, 1_000_000},
	"max-keys":              {0, 1 << 53},
	"keys-per-sec":          {0, inspect.MaxKeysPerSec},
	"in-flight":             {0, inspect.MaxInFlight},
	"max-nodes":             {1, inspect.MaxScanNodes},
	"rate":                  {1, 100_000},
	"demo rate":             {1, 10_000},
	"crash-rate":            {0, 1},
	"sample":                {1, 10_000},
	"top":                   {1, 10_000},
	"group-cap":             {1, exporter.MaxGroupCap},
	"limit":                 {0, 1 << 53},
	"status":                {100, 599},
	"max-stale":             {0, 1 << 53},
	"max-processing-no-ttl": {0, 1 << 53},
	"max-no-ttl":            {0, 1 << 53},
	"max-unknown-state":     {0, 1 << 53},
	"max-value":             {1, inspect.MaxValueCap},
	"large-response":        {0, inspect.MaxValueCap},
	"max-memory":            {0, 1 << 53},
}

// checkFlagRanges refuses a numeric flag (given or from the environment)
// outside its range.
func (a *app) checkFlagRanges(cmd string, fs *pflag.FlagSet) error {
	var err error
	fs.Visit(func(f *pflag.Flag) {
		r, ok := flagRanges[cmd+" "+f.Name]
		if !ok {
			r, ok = flagRanges[f.Name]
		}
		if !ok || err != nil {
			return
		}
		var v float64
		show := number
		if s, isSize := f.Value.(parsedValue[int64]); isSize && s.kind == "bytes" {
			v, show = float64(*s.p), func(b float64) string { return units.FormatBytes(int64(b)) }
		} else if v, ok = parseNumber(f.Value.String()); !ok {
			return
		}
		if v >= r.lo && v <= r.hi {
			return
		}
		what := "--" + f.Name
		if env := a.fromEnv[f.Name]; env != "" {
			what = "$" + env + " (for --" + f.Name + ")"
		}
		err = usageErr("%s %s is out of range: want %s to %s", what, f.Value.String(), show(r.lo), show(r.hi))
	})
	return err
}

func parseNumber(s string) (float64, bool) {
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil && !math.IsNaN(v)
}

func number(v float64) string {
	if v == math.Trunc(v) {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
