package doctor

import (
	"fmt"
	"time"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

// The timing rules: each configured duration (reserve TTL, processing
// timeout, retention) against the TTLs and ages the scan observed.

func ruleReserveTTL(in *input, v ksView, rep *Report) (string, string) {
	s := v.ks.Schema
	if !s.AgeFromTTL {
		return StatusNoData, "schema " + s.Name + " does not derive ages from the TTL"
	}
	o := v.obs
	reserve := v.ks.ReserveTTL
	above := int64(0)
	if v.rep != nil {
		above = v.kr.AgeUnknown[inspect.AgeGapTTLAboveReserve.String()] + v.kr.AgeUnknown[inspect.AgeGapNoReserveTTL.String()]
	}
	if o.procTTLN == 0 {
		return StatusNoData, "no processing record with a TTL was in flight during the scan"
	}
	proposed := inspect.ProposeDuration(o.procTTLMax)
	figs := map[string]int64{"processing_with_ttl": o.procTTLN, "max_processing_ttl_ms": o.procTTLMax,
		"reserve_ttl_ms": reserve.Milliseconds(), "proposed_reserve_ttl_ms": proposed.Milliseconds()}
	switch {
	case above > 0:
		figs["age_unknown"] = above
		rep.add(Finding{Rule: "reserve-ttl", Severity: Critical, Keyspace: v.ks.Name,
			Title: fmt.Sprintf("%s processing records carry a TTL above the configured reserve TTL: their ages are unknown and stale records go unseen", count(above)),
			Evidence: []string{
				fmt.Sprintf("largest TTL left on a processing record: %s; configured reserve TTL: %s", dur(o.procTTLMax), cfg(reserve)),
				fmt.Sprintf("%s of %s processing records with a TTL are above it", count(above), count(o.procTTLN)),
			},
			Figures: figs, Samples: o.samples["age:"+inspect.AgeGapTTLAboveReserve.String()],
			Fix: keyspaceSetting(v.ks.Name, "reserve_ttl", proposed) + " — the TTL the application's reserve step sets, read from the largest TTL seen"})
	case o.procTTLN >= 10 && o.procTTLMax*2 < reserve.Milliseconds():
		rep.add(Finding{Rule: "reserve-ttl", Severity: Warning, Keyspace: v.ks.Name,
			Title: "the configured reserve TTL is over twice the largest TTL any processing record carries: ages are overstated and records look stale too early",
			Evidence: []string{fmt.Sprintf("largest TTL left on %s processing records: %s; configured reserve TTL: %s, so even the newest record reads %s old",
				count(o.procTTLN), dur(o.procTTLMax), cfg(reserve), dur(reserve.Milliseconds()-o.procTTLMax))},
			Figures: figs,
			Fix:     keyspaceSetting(v.ks.Name, "reserve_ttl", proposed) + " — if the application reserves with a shorter TTL than configured"})
	default:
		return StatusOK, ""
	}
	return "", ""
}

func ruleProcessingTimeout(in *input, v ksView, rep *Report) (string, string) {
	timeout := v.ks.ProcessingTimeout
	a := v.age
	if timeout <= 0 {
		return StatusNoData, "no processing timeout configured"
	}
	if a.Count < 10 {
		return StatusNoData, fmt.Sprintf("only %d processing records with a known age: too few to judge the timeout", a.Count)
	}
	t := timeout.Milliseconds()
	figs := map[string]int64{"known_age": a.Count, "p50_ms": a.P50, "p90_ms": a.P90, "p99_ms": a.P99, "timeout_ms": t}
	switch {
	case a.P50 > t:
		stale := int64(0)
		if v.rep != nil {
			stale = v.rep.Stale
		}
		rep.add(Finding{Rule: "processing-timeout", Severity: Warning, Keyspace: v.ks.Name,
			Title: "most processing records are older than the processing timeout: if their workers are alive, the timeout is too short (false stale)",
			Evidence: []string{fmt.Sprintf("processing age p50 %s, p90 %s, p99 %s over %s records; timeout %s; %s flagged stale",
				dur(a.P50), dur(a.P90), dur(a.P99), count(a.Count), cfg(timeout), count(stale))},
			Figures: figs,
			Fix: keyspaceSetting(v.ks.Name, "processing_timeout", inspect.ProposeDuration(a.P99*3/2)) +
				" if these requests are still running (a recovery would run them twice); if their workers died, repair them (idemctl fail) and keep the timeout"})
	case a.P99*10 < t && a.P99 > 0:
		p := max(inspect.ProposeDuration(a.P99*3), time.Second)
		rep.add(Finding{Rule: "processing-timeout", Severity: Info, Keyspace: v.ks.Name,
			Title:    "the processing timeout is over ten times the slowest request in flight: a crashed request waits the whole timeout before anyone sees it",
			Evidence: []string{fmt.Sprintf("processing age p99 %s over %s records; timeout %s", dur(a.P99), count(a.Count), cfg(timeout))},
			Figures:  figs,
			Fix:      keyspaceSetting(v.ks.Name, "processing_timeout", p) + " (three times the observed p99) for faster recovery"})
	default:
		return StatusOK, ""
	}
	return "", ""
}

func ruleRetention(in *input, v ksView, rep *Report) (string, string) {
	o := v.obs
	h := in.opt.RetryHorizon
	if o.doneN == 0 {
		return StatusNoData, "no completed record with a TTL to measure the retention by"
	}
	// The largest TTL left on a completed record is the retention the
	// complete step sets (less the age of the newest one).
	observed := o.doneTTLMax
	figs := map[string]int64{"completed_with_ttl": o.doneN, "max_completed_ttl_ms": observed,
		"retention_ms": v.ks.Retention.Milliseconds(), "retry_horizon_ms": h.Milliseconds()}
	switch {
	case observed < h.Milliseconds()-1000:
		rep.add(Finding{Rule: "retention", Severity: Warning, Keyspace: v.ks.Name,
			Title: fmt.Sprintf("completed records expire before the %s retry horizon: a retry after that runs the request again", cfg(h)),
			Evidence: []string{fmt.Sprintf("largest TTL left on %s completed records: %s (configured retention %s); retry horizon %s",
				count(o.doneN), dur(observed), cfg(v.ks.Retention), cfg(h))},
			Figures: figs,
			Fix: fmt.Sprintf("make the complete step set a TTL of at least %s (EXPIRE key %d) and %s; or, if clients really stop retrying sooner, say so with --retry-horizon",
				cfg(h), int64(h.Seconds()), keyspaceSetting(v.ks.Name, "retention", h))})
	case observed > 2*h.Milliseconds():
		// Steady arrivals: the records older than the horizon hold the
		// share (retention − horizon) / retention of the memory.
		free := int64(float64(o.doneMem) * float64(observed-h.Milliseconds()) / float64(observed))
		figs["memory_freed_bytes_estimate"] = free
		rep.add(Finding{Rule: "retention", Severity: Info, Keyspace: v.ks.Name,
			Title: fmt.Sprintf("completed records are kept far longer than the %s retry horizon: memory, and replay bodies (personal data) kept for nothing", cfg(h)),
			Evidence: []string{fmt.Sprintf("largest TTL left on %s completed records: %s; they use %s; a %s retention would free about %s (assuming steady traffic)",
				count(o.doneN), dur(observed), units.FormatBytes(o.doneMem), cfg(h), units.FormatBytes(free))},
			Figures: figs,
			Fix:     fmt.Sprintf("make the complete step set a TTL of %s (EXPIRE key %d) and %s", cfg(h), int64(h.Seconds()), keyspaceSetting(v.ks.Name, "retention", h))})
	default:
		return StatusOK, ""
	}
	return "", ""
}
