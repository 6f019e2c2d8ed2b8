package reaper

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/internal/units"
)

// dryRunOutcomes reports what a dry run would do with each plan: it
// writes nothing.
func dryRunOutcomes(plans []*actions.Plan, items []Item, rr *RuleReport) {
	for i, p := range plans {
		o := WouldApply
		switch {
		case items[i].Result == WouldVerify:
			o = WouldVerify // its plan lacks what the verdict brings (a reconcile's ref)
		case p.Refused != "":
			o, items[i].Detail = string(p.Outcome), units.OneLine(p.Refused)
		}
		items[i].Result = o
		rr.Outcomes[o]++
	}
	rr.Items = items
}

// applyPlans makes the rule's writes, if the cycle still has the time and
// the lease, and spends them from the hourly budget.
func (r *Reaper) applyPlans(ctx context.Context, bud budget, plans []*actions.Plan, items []Item, rr *RuleReport) {
	if ctx.Err() != nil { // the hooks took the cycle's time: next cycle
		rr.Skips[SkipCycleDeadline] += len(plans)
		rr.Items = nil
		return
	}
	// The lease again, just before writing: a copy that lost it (a pause
	// longer than its TTL) must not act.
	if st, err := r.Lease.Acquire(ctx, r.Client); err != nil || !st.Held {
		rr.Note = "lost the lease before writing: acted on nothing"
		if err != nil {
			rr.Note, rr.Err = "", said(err)+"; acted on nothing"
		}
		return
	}
	results := r.Exec.ApplyAll(ctx, plans, r.Policy.Rate, nil)
	var spent []string
	for i, res := range results {
		o := string(res.Outcome)
		if res.Outcome == write.Skipped && ctx.Err() != nil {
			rr.Skips[SkipCycleDeadline]++
		} else {
			rr.Outcomes[o]++
		}
		items[i].Result, items[i].Detail = o, units.OneLine(res.Detail)
		if res.Outcome == write.Applied {
			spent = append(spent, res.Key)
		}
		if res.Unreplicated() {
			rr.NotReplicated++
			items[i].Detail = units.OneLine(res.Note)
		}
	}
	rr.Items = items
	if err := bud.spend(context.WithoutCancel(ctx), r.Client, spent, nowMs(r.Client, ctx)); err != nil {
		rr.Err = said(err) // the writes are made and audited; the budget undercounts them
	}
	if err := r.Exec.RunStopped(); err != nil {
		rr.Err = "the audit log failed: " + said(err)
	}
}

// nowMs is the server's clock, or the local one when it cannot be read.
func nowMs(c redis.UniversalClient, ctx context.Context) int64 {
	t, err := c.Time(context.WithoutCancel(ctx)).Result()
	if err != nil {
		return time.Now().UnixMilli()
	}
	return t.UnixMilli()
}
