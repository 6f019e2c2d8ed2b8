package exporter

import (
	"github.com/idemctl/idemctl/doctor"
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

// emitDoctor exports doctor's findings on the last complete scan: counts by
// severity (every severity, zero or not), one series per finding, and the
// checks that could not run. Rules and keyspaces are fixed by the code and
// the configuration, so the series are bounded.
func emitDoctor(emit func(*metricDef, float64, ...string), rep *doctor.Report) {
	if rep == nil {
		return
	}
	for _, s := range []doctor.Severity{doctor.Critical, doctor.Warning, doctor.Info} {
		emit(mDoctorFindings, float64(rep.Counts[s.String()]), s.String())
	}
	seen := map[[2]string]bool{}
	for _, f := range rep.Findings {
		if f.Silenced != "" {
			continue // accepted in the config, with a reason
		}
		// a rule may find twice on one keyspace (a replica and its lag): the worst counts
		k := [2]string{f.Rule, f.Keyspace}
		if seen[k] {
			continue
		}
		seen[k] = true
		emit(mDoctorFinding, 1, f.Rule, f.Keyspace, worstOf(rep, f.Rule, f.Keyspace).String())
	}
	emit(mDoctorSkipped, float64(rep.Skipped()))
}

func worstOf(rep *doctor.Report, rule, keyspace string) doctor.Severity {
	w := doctor.Info
	for _, f := range rep.Findings {
		if f.Rule == rule && f.Keyspace == keyspace && f.Silenced == "" {
			w = max(w, f.Severity)
		}
	}
	return w
}
