package cli

import (
	"strings"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

// verdictUnjudged is check's verdict when the data cannot back one.
const verdictUnjudged = "cannot_judge"

// relevantGaps keeps the gaps that leave one of the given thresholds
// unjudged: records of unknown age leave only the age-based ones (stale,
// oldest processing) in doubt; undecoded records or an empty pattern, all.
// Processing records without TTL are judged when --max-processing-no-ttl is
// given: that threshold is the operator's verdict on exactly those records.
func relevantGaps(gaps []inspect.Gap, ths []threshold) []inspect.Gap {
	ages, pnt := false, false
	for _, t := range ths {
		ages = ages || t.Name == "stale" || t.Name == "oldest_processing"
		pnt = pnt || t.Name == "processing_no_ttl"
	}
	out := []inspect.Gap{} // [] in JSON, never null
	for _, g := range gaps {
		switch {
		case g.Kind == inspect.GapScanIncomplete:
			continue // the incomplete verdict (exit 3) already says it
		case g.AgesOnly() && !ages:
			continue
		case g.Cause == inspect.AgeGapNoTTL.String() && pnt:
			continue
		}
		out = append(out, g)
	}
	return out
}

// unjudgedMessage is the one-line CANNOT JUDGE verdict: each gap with its
// fix, then what the thresholds read so far.
func unjudgedMessage(gaps []inspect.Gap, held []string) string {
	parts := make([]string, len(gaps))
	for i, g := range gaps {
		parts[i] = g.String()
	}
	msg := "CANNOT JUDGE: " + strings.Join(parts, "; ")
	if len(held) > 0 {
		msg += " (so far: " + strings.Join(held, ", ") + ")"
	}
	return units.OneLine(msg)
}
