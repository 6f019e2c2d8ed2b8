package actions

import (
	"context"
	"time"
)

// maxBatch bounds a group commit: at most this many intents are durable
// ahead of their writes, so a crash leaves at most this many in doubt.
const maxBatch = 64

// batchSize is how many writes share one intent fsync and one outcome
// fsync: about 50 ms of writes at the rate, 1 to maxBatch.
func batchSize(ratePerSec int) int {
	if ratePerSec <= 0 {
		return maxBatch
	}
	return min(max(ratePerSec/20, 1), maxBatch)
}

// run is one ApplyAll: its id, its plan entries (written with the first
// lines it audits) and its pace.
type run struct {
	id      string
	plans   []*Plan
	planned bool // the plan entries are in the log (bulk runs: a run of one has none)
	rate    int
	start   time.Time
	sent    int
	stopped error // why the run stopped early (an audit failure)
}

// pace waits until the run may send its next write: the n-th write of a
// run at rate r goes no earlier than n/r seconds after the start, so the
// fsyncs between batches do not lower the rate below --rate, and a burst
// never exceeds it on average.
func (r *run) pace(ctx context.Context) {
	if r.rate > 0 {
		due := r.start.Add(time.Duration(float64(r.sent) / float64(r.rate) * float64(time.Second)))
		if d := time.Until(due); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
		}
	}
	r.sent++
}

// ApplyAll runs plans as one named run (RunID) at most ratePerSec writes a
// second, reporting each result. Writes go in small batches, each a group
// commit: the batch's intents are written and fsynced together before any
// of its writes is sent, and its outcomes together after, so no write is
// ever made without a durable intent. If the audit log cannot be written
// (disk full, I/O error) the run stops before its next write and
// RunStopped says why. Cancelling ctx also stops before the next write;
// what was not tried is reported as skipped, so the report says exactly
// what was done.
func (e *Executor) ApplyAll(ctx context.Context, plans []*Plan, ratePerSec int, progress func(i int, r Result)) []Result {
	out := make([]Result, len(plans))
	r := &run{id: RunID(plans), plans: plans, rate: ratePerSec, start: time.Now()}
	// Runs may share an executor (the TUI, tests racing the application):
	// the stop is the run's own, published for RunStopped when it ends.
	defer func() {
		e.mu.Lock()
		e.stopped = r.stopped
		e.mu.Unlock()
	}()
	size := batchSize(ratePerSec)
	for i := 0; i < len(plans); i += size {
		if r.stopped != nil || ctx.Err() != nil {
			detail := "cancelled before this write"
			if r.stopped != nil {
				detail = "not written: the run stopped: " + r.stopped.Error()
			}
			for k := i; k < len(plans); k++ {
				out[k] = Result{Key: plans[k].Key, Action: plans[k].Kind, Outcome: Skipped, Detail: detail}
				if progress != nil {
					progress(k, out[k])
				}
			}
			break
		}
		j := min(i+size, len(plans))
		e.applyBatch(ctx, r, i, out[i:j], progress)
	}
	return out
}

// applyBatch runs plans[base:base+len(out)] as one group commit.
func (e *Executor) applyBatch(ctx context.Context, r *run, base int, out []Result, progress func(int, Result)) {
	plans := r.plans[base : base+len(out)]
	var pre []AuditEntry            // durable before any write of the batch
	intents := map[int]AuditEntry{} // by index in plans: the writes to make
	audited := map[int]bool{}       // refusals with a line in pre
	for k, p := range plans {
		res := Result{Key: p.Key, Action: p.Kind, Changes: p.Changes, UndoNote: p.UndoNote}
		err := e.Policy.Check()
		switch {
		case err != nil:
			res.Outcome, res.Detail = Refused, err.Error()
		case p.Refused != "":
			res.Outcome, res.Detail = p.Outcome, p.Refused
			if res.Outcome == "" {
				res.Outcome = Refused
			}
			if res.Outcome == Conflict && e.Audit != nil {
				// A conflict found while planning is a write attempted and
				// refused, like one the script finds: audited the same way
				// (one outcome line, no intent: nothing was about to change).
				pre = append(pre, e.refusalOf(p, r.id, res))
				audited[k] = true
			}
			if p.settles != nil && e.Audit != nil {
				// close the earlier execution's intent: the write was made
				pre = append(pre, outcomeOf(*p.settles, Result{Outcome: Applied,
					Detail: "settled by a re-run of the same run: the record is as this write left it"}))
			}
		case p.unpinned != nil:
			res.Outcome, res.Detail = Refused, "the record's version could not be read, so the write cannot be guarded: "+explain(p.unpinned, e.Identity.RedisUser)
			if e.Audit != nil {
				pre = append(pre, e.refusalOf(p, r.id, res))
				audited[k] = true
			}
		case e.Audit == nil:
			res.Outcome, res.Detail = Refused, "no audit log: writes are never made unaudited"
		default:
			in := e.entry(p, PhaseIntent, r.id)
			intents[k] = in
			pre = append(pre, in)
			res.AuditID = in.ID
		}
		out[k] = res
	}
	if len(pre) > 0 {
		if !r.planned && len(r.plans) > 1 {
			pre = append(e.planEntries(r.id, r.plans), pre...)
		}
		if err := e.Audit.Append(ctx, pre...); err != nil {
			r.stopped = err
			for k := range out {
				switch {
				case intents[k].ID != "":
					out[k].Outcome, out[k].Detail = Refused, "not written: "+err.Error()
				case audited[k]:
					out[k].Detail += "; WARNING: this refusal could not be audited: " + err.Error()
				}
				if progress != nil {
					progress(base+k, out[k])
				}
			}
			return
		}
		r.planned = true
	}
	var outcomes []AuditEntry
	for k, p := range plans {
		if in, ok := intents[k]; ok {
			if ctx.Err() == nil {
				r.pace(ctx)
			}
			if ctx.Err() != nil {
				out[k].Outcome, out[k].Detail = Skipped, "cancelled before this write"
			} else {
				out[k] = e.write(ctx, p, out[k])
			}
			outcomes = append(outcomes, outcomeOf(in, out[k]))
		}
		if progress != nil {
			progress(base+k, out[k])
		}
	}
	if err := e.Audit.Append(context.WithoutCancel(ctx), outcomes...); err != nil {
		r.stopped = err
		for k := range intents {
			out[k].Detail += "; WARNING: the outcome could not be audited: " + err.Error()
		}
	}
}
