package exporter

import (
	"github.com/idemctl/idemctl/inspect"
)

// emitGaps exports what a complete scan could not back: every cause and
// kind for every keyspace, zero or not, so an alert sees a value drop back.
// An incomplete scan is idemctl_scan_complete's business, not a kind here.
func emitGaps(emit func(*metricDef, float64, ...string), snap *inspect.Snapshot) {
	present := map[[2]string]bool{}
	for _, g := range snap.Gaps() {
		present[[2]string{g.Keyspace, g.Kind}] = true
	}
	for _, k := range snap.Keyspaces {
		for _, cause := range inspect.AgeGapNames() {
			emit(mAgeGap, float64(ageUnknown(&k.Report, k.Name, cause)), k.Name, cause)
		}
		for _, kind := range inspect.GapKinds() {
			if kind != inspect.GapScanIncomplete {
				emit(mCannotJudge, b2f(present[[2]string{k.Name, kind}]), k.Name, kind)
			}
		}
	}
}

func ageUnknown(r *inspect.Report, keyspace, cause string) int64 {
	for _, k := range r.Keyspaces {
		if k.Name == keyspace {
			return k.AgeUnknown[cause]
		}
	}
	return 0
}
