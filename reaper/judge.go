package reaper

import "github.com/idemctl/idemctl/inspect"

// Skip reasons: why a record the rule selects is not acted on. The first
// ones say its liveness is not proven; the last ones that a limit deferred
// it to a later cycle.
const (
	SkipAgeUnknown      = "age_unknown"      // its age cannot be derived (inspect's AgeGap): maybe still running
	SkipDeadlineFuture  = "deadline_future"  // the library's own deadline is still ahead
	SkipDeadlineUnknown = "deadline_unknown" // the rule wants a passed deadline and the record stores none
	SkipLockPresent     = "lock_present"     // its lock companion exists: a worker holds it
	SkipLockUnknown     = "lock_unknown"     // its lock companion's TTL could not be read
	SkipVerdict         = "verdict_mismatch" // the verifier answered another verdict than the rule wants
	SkipVerdictUnknown  = "verdict_unknown"  // the verifier could not tell (timeout, crash, garbage)
	SkipChanged         = "changed"          // re-read before the write, it no longer qualifies
	SkipGone            = "gone"             // deleted or expired before the write
	SkipMaxPerCycle     = "max_per_cycle"    // deferred: the cycle's cap was reached
	SkipHourBudget      = "hour_budget"      // deferred: the hourly budget is spent
	SkipCycleDeadline   = "cycle_deadline"   // deferred: the cycle ran out of time
)

// SkipReasons lists every reason, for metric labels and documentation.
func SkipReasons() []string {
	return []string{SkipAgeUnknown, SkipDeadlineFuture, SkipDeadlineUnknown, SkipLockPresent, SkipLockUnknown,
		SkipVerdict, SkipVerdictUnknown, SkipChanged, SkipGone, SkipMaxPerCycle, SkipHourBudget, SkipCycleDeadline}
}

// judge says whether the rule selects rec, read at the server time nowMs,
// and if it does, why it must still be left alone ("" when it qualifies).
// A processing record qualifies only when it is provably orphaned: old
// enough, its library deadline passed, its lock gone, its age known.
func (r *Rule) judge(rec *inspect.Record, nowMs int64) (selected bool, skip string) {
	if !r.States.Has(rec.State) || !rec.Flags.Has(r.Flags) {
		return false, ""
	}
	if rec.State != inspect.StateProcessing {
		return true, ""
	}
	ks := r.Keyspace
	over := ks.ProcessingTimeout + r.MinOverdue
	if rec.AgeMs >= 0 && rec.AgeMs <= over.Milliseconds() {
		// in flight as far as its age tells (even with its lock gone:
		// the rule's minimum age comes first): not a candidate
		return false, ""
	}
	switch {
	case rec.DeadlineMs > 0 && rec.DeadlineMs > nowMs:
		return true, SkipDeadlineFuture
	case r.DeadlineOver && rec.DeadlineMs <= 0:
		return true, SkipDeadlineUnknown
	}
	if ks.Schema.Lock != nil {
		switch {
		case rec.LockTTLms == inspect.LockAbsent:
		case rec.LockTTLms >= -1:
			return true, SkipLockPresent
		default:
			return true, SkipLockUnknown
		}
	}
	if rec.AgeMs < 0 || rec.AgeGap() != inspect.AgeGapNone {
		return true, SkipAgeUnknown
	}
	return true, ""
}
