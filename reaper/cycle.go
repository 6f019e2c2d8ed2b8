package reaper

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
	"github.com/idemctl/idemctl/verify"
)

// Reaper runs a policy's cycles against one Redis.
type Reaper struct {
	Policy *Policy
	Client redis.UniversalClient
	// Exec plans every write and, with Apply, makes it: a planner
	// (actions.NewPlanner) for a dry run, an executor with its audit log
	// open for --apply. Its Identity.Actor should be Policy.Actor().
	Exec  *actions.Executor
	Apply bool
	Lease *Lease
	Scan  inspect.Options
	// Verifier gives a keyspace's verify hook (nil: none). Hooks run
	// with Apply, or in a dry run with RunHooks (they may be expensive);
	// otherwise a dry run says it would verify.
	Verifier func(ks *inspect.Keyspace) *verify.Hook
	RunHooks bool
	Metrics  *Metrics // nil: none

	verdicts map[string]verify.Result // this cycle's answers, by key
}

// Outcome names for a dry run's plans: written with --apply; or, for a
// rule that wants a verdict, verified first (with --verify in a dry run).
const (
	WouldApply  = "would_apply"
	WouldVerify = "would_verify"
)

// CycleReport is what one cycle saw and did.
type CycleReport struct {
	Started time.Time    `json:"started"`
	TookMs  int64        `json:"took_ms"`
	Apply   bool         `json:"apply"`
	Lease   LeaseStatus  `json:"lease"`
	Rules   []RuleReport `json:"rules"`
	Err     string       `json:"error,omitempty"`
}

// RuleReport is one rule's share of a cycle.
type RuleReport struct {
	Keyspace string `json:"keyspace"`
	Action   Action `json:"action"`
	Records  int64  `json:"records"`  // records scanned
	Complete bool   `json:"complete"` // the scan covered the keyspace
	// Candidates the rule selects; Qualified those of them whose
	// liveness does not forbid acting (the breaker counts these).
	Candidates int            `json:"candidates"`
	Qualified  int            `json:"qualified"`
	Breaker    bool           `json:"breaker_tripped"`
	Skips      map[string]int `json:"skips"`
	Outcomes   map[string]int `json:"outcomes"` // the executor's outcomes; would_apply in a dry run
	// NotReplicated counts applied writes the replicas did not acknowledge
	// in time: a failover could take them back (audit check-applied).
	NotReplicated int    `json:"not_replicated,omitempty"`
	Items         []Item `json:"items,omitempty"`
	Note          string `json:"note,omitempty"` // why the rule acted on nothing, or less than it could
	// Err is a failure that is not the data's doing (the budget or the
	// lease unreadable, the audit log failing): the run is not clean.
	Err string `json:"error,omitempty"`
}

// Item is one record the cycle planned or wrote.
type Item struct {
	Key     string `json:"key"`
	Result  string `json:"outcome"` // the executor's outcome, or would_apply / would_verify
	Detail  string `json:"detail,omitempty"`
	Verdict string `json:"verdict,omitempty"`
}

// candidate is a qualified record and the server time it was read at.
type candidate struct {
	rec   inspect.Record
	nowMs int64
}

// Cycle runs one pass: the lease, then each rule in turn, within the
// policy's cycle deadline. A copy without the lease acts on nothing.
func (r *Reaper) Cycle(ctx context.Context) (rep CycleReport) {
	rep = CycleReport{Started: time.Now(), Apply: r.Apply}
	r.verdicts = map[string]verify.Result{}
	defer func() {
		rep.TookMs = time.Since(rep.Started).Milliseconds()
		r.Metrics.observe(&rep)
	}()
	ctx, cancel := context.WithTimeout(ctx, r.Policy.CycleDeadline)
	defer cancel()
	if !r.Apply {
		// A dry run never takes the lease, and only shows who holds it: a
		// read-only user that may not read it still gets its dry run.
		var err error
		if rep.Lease, err = r.Lease.Holder(ctx, r.Client); err != nil {
			rep.Lease.Error = said(err)
		}
	} else {
		var err error
		if rep.Lease, err = r.Lease.Acquire(ctx, r.Client); err != nil {
			rep.Err = said(err)
			return rep
		}
	}
	if r.Apply && !rep.Lease.Held {
		return rep
	}
	for _, rule := range r.Policy.Rules {
		rep.Rules = append(rep.Rules, r.runRule(ctx, rule))
	}
	return rep
}

// runRule is one rule's share of a cycle: scan, the checks that stop it
// acting at all, then plans up to the cycle's limit, written or (in a dry
// run) only reported.
func (r *Reaper) runRule(ctx context.Context, rule *Rule) RuleReport {
	rr := RuleReport{Keyspace: rule.KeyspaceName, Action: rule.Action, Skips: map[string]int{}, Outcomes: map[string]int{}}
	cands, err := r.collect(ctx, rule, &rr)
	if holdsOff(rule, &rr, err) {
		return rr
	}
	// oldest first: the likeliest orphans, and the ones blocking retries longest
	slices.SortStableFunc(cands, func(a, b candidate) int { return cmp.Compare(b.rec.AgeMs, a.rec.AgeMs) })
	bud := budgetFor(r.Policy, rule)
	limit, why, ok := r.cycleLimit(ctx, rule, bud, &rr)
	if !ok {
		return rr
	}
	plans, items := r.planUpTo(ctx, rule, cands, limit, why, &rr)
	switch {
	case len(plans) == 0:
		rr.Items = items
	case !r.Apply:
		dryRunOutcomes(plans, items, &rr)
	default:
		r.applyPlans(ctx, bud, plans, items, &rr)
	}
	return rr
}

// holdsOff reports, with why in rr, a rule that must act on nothing after
// its scan: the scan failed, covered part of the keyspace, or found more
// than the breaker allows.
func holdsOff(rule *Rule, rr *RuleReport, scanErr error) bool {
	if scanErr != nil {
		rr.Note = "scan failed: " + said(scanErr) + "; acted on nothing"
		return true
	}
	if !rr.Complete {
		// the breaker cannot be trusted on part of the keyspace
		rr.Note = "the scan did not cover the keyspace: acted on nothing"
		return true
	}
	if rr.Qualified > rule.Breaker {
		rr.Breaker = true
		rr.Note = fmt.Sprintf("circuit breaker: %d records qualify, above the threshold %d: acted on none — mass staleness is an incident for a human (is the application down?)",
			rr.Qualified, rule.Breaker)
		return true
	}
	return false
}

// cycleLimit is how many writes the rule may make this cycle and the skip
// that counts the candidates past it; not ok when an applying run cannot
// read its budget (it then acts on nothing).
func (r *Reaper) cycleLimit(ctx context.Context, rule *Rule, bud budget, rr *RuleReport) (limit int, why string, ok bool) {
	left, _, err := bud.remaining(ctx, r.Client)
	switch {
	case err != nil && r.Apply:
		rr.Err = said(err) + "; acted on nothing"
		return 0, "", false
	case err != nil:
		rr.Note, left = said(err)+"; a dry run assumes it unspent", rule.PerHour
	}
	limit, why = rule.MaxPerCycle, SkipMaxPerCycle
	if left < limit {
		limit, why = left, SkipHourBudget
	}
	return limit, why, true
}

// planUpTo plans the candidates, oldest first, until limit plans are made.
// The cap counts writes, not candidates: records the verifier turns
// down make room for the next oldest, a chunk at a time, so the oldest
// mismatches never starve a rule. The cycle deadline bounds the hooks.
func (r *Reaper) planUpTo(ctx context.Context, rule *Rule, cands []candidate, limit int, why string, rr *RuleReport) ([]*actions.Plan, []Item) {
	var plans []*actions.Plan
	var items []Item
	next := 0
	for next < len(cands) && len(plans) < limit && ctx.Err() == nil {
		end := min(next+limit-len(plans), len(cands))
		p, it := r.plan(ctx, rule, cands[next:end], rr)
		plans, items, next = append(plans, p...), append(items, it...), end
	}
	if rest := len(cands) - next; rest > 0 {
		if ctx.Err() != nil {
			why = SkipCycleDeadline
		}
		rr.Skips[why] += rest
	}
	return plans, items
}

// collect scans the rule's keyspace and keeps the qualified records, at
// most one more than the breaker's threshold (the rest are only counted).
func (r *Reaper) collect(ctx context.Context, rule *Rule, rr *RuleReport) ([]candidate, error) {
	var out []candidate
	covs, err := inspect.Scan(ctx, r.Client, []*inspect.Keyspace{rule.Keyspace}, r.Scan, func(b inspect.Batch) error {
		for i := range b.Records {
			rec := &b.Records[i]
			rr.Records++
			sel, skip := rule.judge(rec, b.ServerTimeMs)
			if !sel {
				continue
			}
			rr.Candidates++
			if skip != "" {
				rr.Skips[skip]++
				continue
			}
			rr.Qualified++
			if len(out) <= rule.Breaker {
				out = append(out, candidate{rec: *rec, nowMs: b.ServerTimeMs})
			}
		}
		return nil
	})
	rr.Complete = err == nil && len(covs) > 0
	for _, c := range covs {
		if !c.Complete {
			rr.Complete = false
			if err == nil && c.Err != nil {
				err = c.Err
			}
		}
	}
	if err == nil && ctx.Err() != nil {
		err = errors.New("the cycle deadline passed during the scan")
	}
	return out, err
}

// plan verifies (where the rule asks) and plans each candidate. Plans read
// the record again and pin its version: a record that no longer qualifies
// on that read is skipped as changed, so what is written is exactly what
// was judged.
func (r *Reaper) plan(ctx context.Context, rule *Rule, cands []candidate, rr *RuleReport) ([]*actions.Plan, []Item) {
	verdicts, verified := r.verify(ctx, rule, cands)
	var plans []*actions.Plan
	var items []Item
	for i := range cands {
		if ctx.Err() != nil {
			rr.Skips[SkipCycleDeadline] += len(cands) - i
			break
		}
		rec := &cands[i].rec
		req := actions.Request{Kind: rule.Action.Kind(), Keyspace: rule.Keyspace, Key: rec.Key, Reason: rule.reason(r.Policy),
			TTL: rule.TTL, By: r.Policy.Actor(), Saw: &actions.Seen{State: rec.RawState, Fingerprint: rec.Fingerprint}}
		item := Item{Key: inspect.Sanitize(rec.Key)}
		if verified {
			v := verdicts[i]
			item.Verdict = string(v.Verdict)
			switch {
			case v.Verdict != verify.Done && v.Verdict != verify.NotDone:
				rr.Skips[SkipVerdictUnknown]++
				continue
			case string(v.Verdict) != rule.Verdict:
				rr.Skips[SkipVerdict]++
				continue
			}
			req.Reason += "; verifier: " + string(v.Verdict)
			if v.Detail != "" {
				req.Reason += " (" + units.Clip(units.OneLine(v.Detail), 200) + ")"
			}
			// the same verdict means the same write as in triage; the rule
			// only chooses which verdict it acts on, and how (expire/fail)
			act := verify.ActionFor(rec, v, req.Saw, req.Reason, r.hookName(rule))
			if act.Left != "" { // a done verdict the schema cannot record (no ref)
				rr.Skips[SkipVerdictUnknown]++
				continue
			}
			req.Evidence = act.Request.Evidence
			if rule.Action == ActReconcileIfVerified {
				req.Ref, req.Status, req.Response = act.Request.Ref, act.Request.Status, act.Request.Response
			}
		}
		p, err := r.Exec.Plan(ctx, req)
		if err != nil {
			rr.Skips[SkipChanged]++ // unreadable now: left for a later cycle
			continue
		}
		switch {
		case p.Outcome == write.NotFound:
			rr.Skips[SkipGone]++
			continue
		case p.Outcome == write.Conflict:
			rr.Skips[SkipChanged]++
			continue
		case p.Read != nil:
			if sel, skip := rule.judge(p.Read, p.ReadAtMs()); !sel || skip != "" {
				rr.Skips[SkipChanged]++
				continue
			}
		}
		if rule.NeedsVerifier() && !verified {
			item.Result = WouldVerify
		}
		plans = append(plans, p)
		items = append(items, item)
	}
	return plans, items
}

// hookName is the executable of the rule's keyspace's hook, for the audit
// log's evidence.
func (r *Reaper) hookName(rule *Rule) string {
	if r.Verifier == nil {
		return ""
	}
	if h := r.Verifier(rule.Keyspace); h != nil && len(h.Command) > 0 {
		return h.Command[0]
	}
	return ""
}

// verify runs the keyspace's hook on the candidates when the rule wants a
// verdict and hooks may run now; verified says whether they ran.
func (r *Reaper) verify(ctx context.Context, rule *Rule, cands []candidate) (out []verify.Result, verified bool) {
	if !rule.NeedsVerifier() || !(r.Apply || r.RunHooks) {
		return nil, false
	}
	out = make([]verify.Result, len(cands))
	var hook *verify.Hook
	if r.Verifier != nil {
		hook = r.Verifier(rule.Keyspace)
	}
	if hook == nil {
		for i := range out {
			out[i] = verify.Result{Verdict: verify.Unknown, Why: "the keyspace has no verify hook"}
		}
		return out, true
	}
	// A record two rules select (reconcile on done, fail on not_done) is
	// asked about once a cycle: the hook may be expensive.
	var recs []*inspect.Record
	var at []int
	for i := range cands {
		if v, ok := r.verdicts[cands[i].rec.Key]; ok {
			out[i] = v
			continue
		}
		recs, at = append(recs, &cands[i].rec), append(at, i)
	}
	hook.VerifyAll(ctx, recs, func(i int, res verify.Result) {
		out[at[i]] = res
		if res.Verdict != verify.Unknown {
			r.verdicts[recs[i].Key] = res
		}
	})
	return out, true
}

// said is an error as a report holds it: one line, and safe to print,
// since it may quote the server.
func said(err error) string { return inspect.Line(err.Error()) }
