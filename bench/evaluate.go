package main

// evaluate checks every target of the issue against this run, one family
// of targets at a time, in the order the report lists them.
func (r *Results) evaluate() {
	r.Targets = nil
	add := func(t Target) { r.Targets = append(r.Targets, t) }
	for _, family := range []func(add func(Target)){
		r.evaluateVariants, r.evaluateRSS, r.evaluateTUI, r.evaluateTUIBench, r.evaluateHeld, r.evaluateBudget,
		r.evaluateSampling, r.evaluateRecordMemory, r.evaluateWrites, r.evaluateSnapshot, r.evaluateServerCost, r.evaluateFollow,
	} {
		family(add)
	}
}

// TenM is the record count from which the harness checks the 10M targets.
const TenM = 10_000_000
