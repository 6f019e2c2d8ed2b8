package doctor

import (
	"fmt"

	"github.com/idemctl/idemctl/inspect"
)

// The evidence rules: whether the scan's counts can be trusted at all — a
// keyspace not covered, a pattern matching nothing, ages unreadable, or
// another record format sharing the pattern.

// ruleCoverage: the evidence gaps no other rule owns — a scan that did not
// cover a keyspace, a pattern that matched nothing, ages unreadable.
func ruleCoverage(in *input, rep *Report) {
	found := false
	for _, g := range in.snap.Gaps() {
		switch {
		case g.Kind == inspect.GapScanIncomplete:
			rep.add(Finding{Rule: "scan-coverage", Severity: Critical, Keyspace: g.Keyspace, Title: "the scan did not cover the keyspace: every count below is a lower bound",
				Evidence: []string{g.Message}, Fix: g.Fix})
		case g.Kind == inspect.GapNoMatch:
			rep.add(Finding{Rule: "scan-coverage", Severity: Critical, Keyspace: g.Keyspace, Title: "the keyspace's pattern matches no key in a database that holds keys",
				Evidence: []string{g.Message}, Figures: map[string]int64{"database_keys": in.snap.DBKeys}, Fix: g.Fix})
		case g.Cause == inspect.AgeGapTTLUnreadable.String() || g.Cause == inspect.AgeGapNoTimestamp.String():
			rep.add(Finding{Rule: "scan-coverage", Severity: Critical, Keyspace: g.Keyspace, Title: "processing records whose age cannot be derived: stale detection is blind to them",
				Evidence: []string{g.Message}, Figures: map[string]int64{"records": g.Records},
				Samples: in.obs.get(g.Keyspace).samples["age:"+g.Cause], Fix: g.Fix})
		default:
			continue // reserve-ttl, processing-no-ttl and mixed-formats own the others
		}
		found = true
	}
	if !found {
		rep.check("scan-coverage", "", StatusOK, "")
	}
}

func ruleMixedFormats(in *input, v ksView, rep *Report) (string, string) {
	if v.rep == nil {
		return StatusNoData, "no records"
	}
	n, total := v.kr.Undecoded, v.rep.Total
	if n == 0 {
		return StatusOK, ""
	}
	sev, title := Warning, fmt.Sprintf("%s records under this pattern are not of schema %s: another format shares the pattern", count(n), v.ks.Schema.Name)
	if n*2 > total {
		sev, title = Critical, fmt.Sprintf("most records under this pattern do not decode as %s: every count for the keyspace is wrong", v.ks.Schema.Name)
	}
	rep.add(Finding{Rule: "mixed-formats", Severity: sev, Keyspace: v.ks.Name, Title: title,
		Evidence: []string{fmt.Sprintf("%s of %s records (%d%%) are undecoded or fail to decode", count(n), count(total), n*100/max(total, 1))},
		Figures:  map[string]int64{"records": n, "total": total}, Samples: v.obs.samples[inspect.FlagUndecoded.String()],
		Fix: fmt.Sprintf("run idemctl detect --match %q: narrow the keyspace's match to one format, or add a keyspace for the other", inspect.Sanitize(v.ks.Match))})
	return "", ""
}
