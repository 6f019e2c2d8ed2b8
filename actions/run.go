package actions

import (
	"context"
	"time"

	"golang.org/x/time/rate"

	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/actions/write"
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
	planned bool          // the plan entries are in the log (bulk runs: a run of one has none)
	limit   *rate.Limiter // --rate (nil: unpaced)
	sent    int
	stopped error // why the run stopped early (an audit failure)
	// replicas is, by primary address, how many replicas its writes
	// wait for (AutoReplicas resolved once per run) and why.
	replicas map[string]wantReplicas
}

type wantReplicas struct {
	n    int
	note string
}

// newLimit is a run's pace at ratePerSec writes a second (<= 0: none): a
// token bucket (golang.org/x/time/rate) as deep as a batch. It starts
// empty, so the first write goes at once and the n-th no earlier than n/r
// seconds after the start; the fsyncs between batches are made up within
// the batch's depth, so they do not lower the rate below --rate, and no
// burst ever exceeds one batch.
func newLimit(ratePerSec int) *rate.Limiter {
	if ratePerSec <= 0 {
		return nil
	}
	l := rate.NewLimiter(rate.Limit(ratePerSec), batchSize(ratePerSec))
	l.AllowN(time.Now(), l.Burst())
	return l
}

// pace waits until the run may send its next write (or ctx ends).
func (r *run) pace(ctx context.Context) {
	if r.limit != nil && r.sent > 0 {
		now := time.Now()
		if d := r.limit.ReserveN(now, 1).DelayFrom(now); d > 0 {
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
	r := &run{id: RunID(plans), plans: plans, limit: newLimit(ratePerSec)}
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
				out[k] = Result{Key: plans[k].Key, Action: plans[k].Kind, Outcome: write.Skipped, Detail: detail}
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
	b := batch{intents: map[int]audit.Entry{}, audited: map[int]bool{}}
	for k, p := range plans {
		out[k] = e.admit(r, k, p, &b)
	}
	if len(b.pre) > 0 && !e.commitPre(ctx, r, base, &b, out, progress) {
		return
	}
	e.writeBatch(ctx, r, plans, b.intents, out)
	e.auditOutcomes(ctx, r, base, b.intents, out, progress)
}

// batch is a group commit's lines to make durable before any of its
// writes, and which of its plans (by index) they stand for.
type batch struct {
	pre     []audit.Entry       // durable before any write of the batch
	intents map[int]audit.Entry // by index in plans: the writes to make
	audited map[int]bool        // refusals with a line in pre
}

// admit decides plan k of the batch before anything is written: refused
// (by the policy, while planning, unpinned, or for want of an audit log),
// or a write to make, its intent queued in b.pre.
func (e *Executor) admit(r *run, k int, p *Plan, b *batch) Result {
	res := Result{Key: p.Key, Action: p.Kind, Changes: p.Changes, UndoNote: p.UndoNote}
	err := e.Policy.Check()
	switch {
	case err != nil:
		res.Outcome, res.Detail = write.Refused, err.Error()
	case p.Refused != "":
		res.Outcome, res.Detail = p.Outcome, p.Refused
		if res.Outcome == "" {
			res.Outcome = write.Refused
		}
		if res.Outcome == write.Conflict && e.Audit != nil {
			// A conflict found while planning is a write attempted and
			// refused, like one the script finds: audited the same way
			// (one outcome line, no intent: nothing was about to change).
			b.pre = append(b.pre, e.refusalOf(p, r.id, res))
			b.audited[k] = true
		}
		if p.settles != nil && e.Audit != nil {
			// close the earlier execution's intent: the write was made
			b.pre = append(b.pre, outcomeOf(*p.settles, Result{Outcome: write.Applied,
				Detail: "settled by a re-run of the same run: the record is as this write left it"}))
		}
	case p.unpinned != nil:
		res.Outcome, res.Detail = write.Refused, "the record's version could not be read, so the write cannot be guarded: "+explain(p.unpinned, e.Identity.RedisUser)
		if e.Audit != nil {
			b.pre = append(b.pre, e.refusalOf(p, r.id, res))
			b.audited[k] = true
		}
	case e.Audit == nil:
		res.Outcome, res.Detail = write.Refused, "no audit log: writes are never made unaudited"
	default:
		in := e.entry(p, audit.PhaseIntent, r.id)
		b.intents[k] = in
		b.pre = append(b.pre, in)
		res.AuditID = in.ID
	}
	return res
}

// commitPre appends and fsyncs the batch's pre lines (after the run's plan
// entries, the first time a bulk run audits anything) and reports whether
// they are durable. If not, the run stops and none of the batch's writes
// is made: each intent's result says why, and each refusal that it went
// unaudited.
func (e *Executor) commitPre(ctx context.Context, r *run, base int, b *batch, out []Result, progress func(int, Result)) bool {
	pre := b.pre
	if !r.planned && len(r.plans) > 1 {
		pre = append(e.planEntries(r.id, r.plans), pre...)
	}
	if err := e.Audit.Append(ctx, pre...); err != nil {
		r.stopped = err
		for k := range out {
			switch {
			case b.intents[k].ID != "":
				out[k].Outcome, out[k].Detail = write.Refused, "not written: "+err.Error()
			case b.audited[k]:
				out[k].Detail += "; WARNING: this refusal could not be audited: " + err.Error()
			}
			if progress != nil {
				progress(base+k, out[k])
			}
		}
		return false
	}
	r.planned = true
	return true
}

// auditOutcomes reports each result of the batch and audits the outcome of
// each write tried, even once ctx is cancelled: a write that was made is
// recorded. An outcome that cannot be audited stops the run and says so on
// its result.
func (e *Executor) auditOutcomes(ctx context.Context, r *run, base int, intents map[int]audit.Entry, out []Result, progress func(int, Result)) {
	var outcomes []audit.Entry
	for k := range out {
		if in, ok := intents[k]; ok {
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

// writeBatch makes the batch's writes whose intents are durable, then
// waits for the replicas. Each primary's writes go over one connection,
// the one its WAIT is sent on; an outcome is final (audited, reported)
// once waited for.
func (e *Executor) writeBatch(ctx context.Context, r *run, plans []*Plan, intents map[int]audit.Entry, out []Result) {
	conns := newPrimaryConns(e.Client)
	defer conns.close()
	wrote := map[int]*primaryConn{}
	for k, p := range plans {
		if _, ok := intents[k]; !ok {
			continue
		}
		if ctx.Err() == nil {
			r.pace(ctx)
		}
		if ctx.Err() != nil {
			out[k].Outcome, out[k].Detail = write.Skipped, "cancelled before this write"
			continue
		}
		pc := conns.forKey(ctx, p.Key)
		var via processor = e.Client
		if pc != nil {
			via = pc.conn
		}
		out[k] = e.write(ctx, via, p, out[k])
		if out[k].Outcome == write.Applied {
			wrote[k] = pc
			if pc != nil {
				pc.writes++
			}
		}
	}
	e.replicated(ctx, r, conns, wrote, out)
}

// replicated waits, per primary, for the batch's applied writes to reach
// the replicas (and fsyncs) asked for, and says so on each result.
func (e *Executor) replicated(ctx context.Context, r *run, conns *primaryConns, wrote map[int]*primaryConn, out []Result) {
	if len(wrote) == 0 {
		return
	}
	reps := conns.wait(ctx, e.Durability, r.wanted(e.Durability))
	for k, pc := range wrote {
		if pc == nil {
			out[k].Replication = &write.Replication{NotReplicated: true, Note: "this client cannot pin the primary's connection: replication not confirmed"}
			continue
		}
		rep := reps[pc.addr]
		out[k].Replication = &rep
	}
}

// wanted resolves how many replicas a primary's writes wait for.
func (r *run) wanted(d Durability) func(ctx context.Context, p *primaryConn) (int, string) {
	return func(ctx context.Context, p *primaryConn) (int, string) {
		switch {
		case d.NoWait:
			return 0, "replication not waited for (--min-replicas 0): a failover could take this write back unseen"
		case d.MinReplicas > 0:
			return d.MinReplicas, ""
		}
		if w, ok := r.replicas[p.addr]; ok {
			return w.n, w.note
		}
		w := wantReplicas{n: 1}
		switch n, err := onlineReplicas(ctx, p.conn); {
		case err != nil:
			// Nothing to count them by: waiting for one that may not
			// exist would report every write unreplicated.
			w = wantReplicas{note: "replication not waited for: the server does not say how many replicas it has (" +
				waitError(err, "info") + "); --min-replicas N waits for N"}
		case n == 0:
			w = wantReplicas{n: 0, note: NoReplicaNote}
		}
		if r.replicas == nil {
			r.replicas = map[string]wantReplicas{}
		}
		r.replicas[p.addr] = w
		return w.n, w.note
	}
}
