package doctor

import (
	"fmt"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

// The content rules: what each record stores (its fingerprint, the size
// of its replay body).

func ruleMissingFingerprint(in *input, v ksView, rep *Report) (string, string) {
	s := v.ks.Schema
	if s.Fingerprint == "" {
		if len(s.Requires) > 0 {
			return StatusNoData, "the format compares the stored request instead of a fingerprint"
		}
		if v.rep == nil {
			return StatusNoData, "no records"
		}
		rep.add(Finding{Rule: "missing-fingerprint", Severity: Info, Keyspace: v.ks.Name,
			Title:    "the record format stores no request fingerprint: a key reused with another body replays the first response without anyone noticing",
			Evidence: []string{"schema " + s.Name + " has no fingerprint field"},
			Fix:      "store a hash of the canonical request body with the record and compare it on every retry (answer 422 on a mismatch)"})
		return "", ""
	}
	n := v.flag("missing_fingerprint")
	if status, reason, quiet := v.judge(n); quiet {
		return status, reason
	}
	rep.add(Finding{Rule: "missing-fingerprint", Severity: Warning, Keyspace: v.ks.Name,
		Title:    fmt.Sprintf("%s records have no fingerprint: reuse of their keys with another body cannot be detected", count(n)),
		Evidence: []string{fmt.Sprintf("%s of %s records lack %s", count(n), count(v.rep.Total), inspect.Sanitize(s.Fingerprint))},
		Figures:  map[string]int64{"records": n}, Samples: v.obs.samples[inspect.FlagMissingFingerprint.String()],
		Fix: "make the reserve step store the request fingerprint (" + inspect.Sanitize(s.Fingerprint) + ") with the record"})
	return "", ""
}

func ruleLargeResponse(in *input, v ksView, rep *Report) (string, string) {
	n := v.flag("large_response")
	if status, reason, quiet := v.judge(n); quiet {
		return status, reason
	}
	rep.add(Finding{Rule: "large-response", Severity: Warning, Keyspace: v.ks.Name,
		Title: fmt.Sprintf("%s records store replay bodies above %s: memory, and personal data kept for the whole retention", count(n), units.FormatBytes(v.ks.LargeResponse)),
		Evidence: []string{fmt.Sprintf("%s records above %s; the largest %s; the keyspace uses %s",
			count(n), units.FormatBytes(v.ks.LargeResponse), units.FormatBytes(v.obs.respMax), units.FormatBytes(v.rep.MemoryBytes.Total))},
		Figures: map[string]int64{"records": n, "largest_bytes": v.obs.respMax}, Samples: v.obs.samples[inspect.FlagLargeResponse.String()],
		Fix: "store a bounded replay (status and a reference to the result) instead of the whole body; if these sizes are expected, raise large_response for the keyspace"})
	return "", ""
}
