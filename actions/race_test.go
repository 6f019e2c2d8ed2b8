package actions

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/inspecttest"
)

// A live race between the application and the operator's tool on one pool
// of keys. The application reserves and completes with the lesson's scripts
// (every reservation with a fingerprint of its own, so a fingerprint names
// one lifetime of a key); workers crash now and then, leaving records
// stuck; keys the tool deletes are reserved again. The tool meanwhile plans
// and applies fail, reconcile and expire on random keys, pausing a little
// between plan and write so that the application often gets in between.
//
// Afterwards the audit log and a final read of every key must agree with
// what each side was told: every applied write acted on exactly the record
// it planned against, every other write changed nothing, and no COMPLETE
// the application was told succeeded is lost.
func TestRaceToolAgainstApplication(t *testing.T) {
	r := sharedRig(t)
	ks := inspecttest.Keyspace(t, "atlasmart")
	ctx := t.Context()
	const nKeys = 200
	keys := make([]string, nKeys)
	for i := range keys {
		keys[i] = fmt.Sprintf("atlasmart:ch23:idem:customer-%d:POST:/orders:race-%d", i%17, i)
	}

	type reserved struct{ key, fp string }
	type completed struct {
		key, fp, resp string
		status        int
	}
	type toolOp struct {
		req  Request
		ttl  time.Duration // expire
		plan *Plan
		res  Result
	}
	var (
		stop                  atomic.Bool
		seq                   atomic.Int64
		mu                    sync.Mutex
		starts                []reserved
		completes             []completed
		ops                   []toolOp
		errs                  []error
		startsPerKey          [nKeys]atomic.Int64
		reReserved, conflicts atomic.Int64
		appliedBy             [4]atomic.Int64 // fail, reconcile, delete, expire
		hot                   [8]atomic.Int64 // recently reserved keys: where the races are
		hotPos                atomic.Int64
		retries               = make(chan int, 64) // keys the tool deleted: their clients retry at once
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
		stop.Store(true)
	}

	// The application.
	app := func(w int) {
		rng := rand.New(rand.NewPCG(uint64(w), 0xa99))
		type work struct {
			reserved
			due time.Time // when the worker is done and calls COMPLETE
		}
		var inflight []work
		var myStarts []reserved
		var myCompletes []completed
		defer func() {
			mu.Lock()
			starts = append(starts, myStarts...)
			completes = append(completes, myCompletes...)
			mu.Unlock()
		}()
		for !stop.Load() {
			if i := slices.IndexFunc(inflight, func(w work) bool { return !w.due.After(time.Now()) }); i >= 0 {
				req := inflight[i]
				inflight = slices.Delete(inflight, i, i+1)
				status := 200 + rng.IntN(3)
				resp := fmt.Sprintf(`{"order_id":"ord-%d"}`, seq.Add(1))
				n, err := appsim.Complete.Run(ctx, r.c, []string{req.key}, req.fp, status, resp, 300).Int64()
				if err != nil {
					fail(fmt.Errorf("COMPLETE %s: %w", req.key, err))
					return
				}
				if n == 1 {
					myCompletes = append(myCompletes, completed{req.key, req.fp, resp, status})
				}
				continue
			}
			k := rng.IntN(nKeys)
			select {
			case k = <-retries:
			default:
			}
			f := fmt.Sprintf("fp-%d-%d", w, seq.Add(1))
			got, err := appsim.Reserve.Run(ctx, r.c, []string{keys[k]}, f, reserveTTL).StringSlice()
			if err != nil || len(got) == 0 {
				fail(fmt.Errorf("RESERVE %s: %v %w", keys[k], got, err))
				return
			}
			if got[0] == "STARTED" {
				if startsPerKey[k].Add(1) > 1 {
					reReserved.Add(1) // only a tool delete ends a lifetime here
				}
				hot[hotPos.Add(1)%int64(len(hot))].Store(int64(k))
				myStarts = append(myStarts, reserved{keys[k], f})
				if rng.IntN(8) != 0 { // else the worker crashes: the record stays PROCESSING
					inflight = append(inflight, work{reserved{keys[k], f}, time.Now().Add(time.Duration(rng.IntN(5000)) * time.Microsecond)})
				}
			}
			time.Sleep(200 * time.Microsecond)
		}
	}

	// The operator's tool.
	tool := func(w int) {
		rng := rand.New(rand.NewPCG(uint64(w), 0x7001))
		var mine []toolOp
		defer func() {
			mu.Lock()
			ops = append(ops, mine...)
			mu.Unlock()
		}()
		for !stop.Load() {
			idx := seq.Add(1)
			k := rng.IntN(nKeys)
			if rng.IntN(4) != 0 {
				k = int(hot[rng.IntN(len(hot))].Load()) // a record the application is working on
			}
			req := Request{Keyspace: ks, Key: keys[k], Reason: "race-" + strconv.FormatInt(idx, 10)}
			op := toolOp{}
			switch x := rng.IntN(20); {
			case x < 7:
				req.Kind = write.KindFail
			case x < 12:
				req.Kind, req.Ref = write.KindReconcile, "ref-"+strconv.FormatInt(idx, 10)
			case x < 16:
				req.Kind, req.TTL = write.KindExpire, TTL{Mode: TTLSet}
			default:
				// Hours, and a distinct number of minutes per write, so a
				// final TTL names the write that set it.
				op.ttl = 3*time.Hour + time.Duration(idx)*time.Minute
				req.Kind, req.TTL = write.KindExpire, TTL{Mode: TTLSet, D: op.ttl}
			}
			p, err := r.ex.Plan(ctx, req)
			if err != nil {
				fail(fmt.Errorf("plan %s %s: %w", req.Kind, req.Key, err))
				return
			}
			if rng.IntN(2) == 0 {
				time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
			}
			op.req, op.plan, op.res = req, p, r.ex.Apply(ctx, p)
			mine = append(mine, op)
			switch {
			case op.res.Outcome == write.Conflict && p.Refused == "":
				conflicts.Add(1)
			case op.res.Outcome != write.Applied:
			case req.Kind == write.KindFail:
				appliedBy[0].Add(1)
			case req.Kind == write.KindReconcile:
				appliedBy[1].Add(1)
			case p.Delete:
				appliedBy[2].Add(1)
				select {
				case retries <- slices.Index(keys, req.Key):
				default:
				}
			default:
				appliedBy[3].Add(1)
			}
		}
	}

	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() { app(w) })
	}
	for w := range 2 {
		wg.Go(func() { tool(100 + w) })
	}
	// At least two seconds, and until every interleaving worth checking
	// happened a few times: counts, not timings, decide when to stop.
	start := time.Now()
	enough := func() bool {
		for i := range appliedBy {
			if appliedBy[i].Load() < 5 {
				return false
			}
		}
		return conflicts.Load() >= 5 && reReserved.Load() >= 5
	}
	for !stop.Load() && (time.Since(start) < 2*time.Second || !enough()) && time.Since(start) < 20*time.Second {
		time.Sleep(20 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	for _, err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}

	// Lifetimes: one per successful RESERVE, named by its fingerprint.
	type lifetime struct {
		key         string
		complete    *completed
		fail, recon *toolOp
		deletes     []*toolOp
		expires     []*toolOp
	}
	lives := map[string]*lifetime{}
	for _, s := range starts {
		if lives[s.fp] != nil {
			t.Fatalf("fingerprint %s started twice", s.fp)
		}
		lives[s.fp] = &lifetime{key: s.key}
	}
	for i := range completes {
		c := &completes[i]
		l := lives[c.fp]
		if l == nil || l.key != c.key {
			t.Fatalf("COMPLETE of %s %s that was never reserved", c.key, c.fp)
		}
		if l.complete != nil {
			t.Fatalf("two COMPLETEs of %s succeeded", c.fp)
		}
		l.complete = c
	}

	// The audit log: one intent and one outcome per attempted write, the
	// reason naming the tool's operation.
	byReason := map[string]*toolOp{}
	for i := range ops {
		byReason[ops[i].req.Reason] = &ops[i]
	}
	type pair struct{ intent, outcome *audit.Entry }
	audited := map[string]*pair{} // by reason
	ids := map[string]string{}
	entries := r.entries()
	for i := range entries {
		e := &entries[i]
		op := byReason[e.Reason]
		if op == nil {
			t.Fatalf("audit entry for an unknown write: %+v", e)
		}
		p := audited[e.Reason]
		if p == nil {
			p = &pair{}
			audited[e.Reason] = p
		}
		switch e.Phase {
		case "intent":
			if p.intent != nil || p.outcome != nil {
				t.Fatalf("second intent for %s", e.Reason)
			}
			p.intent = e
			ids[e.ID] = e.Reason
		case "outcome":
			if op.plan.Refused != "" && p.intent == nil && p.outcome == nil && e.Outcome == write.Conflict {
				p.outcome = e // a conflict found while planning: one line, nothing sent
				ids[e.ID] = e.Reason
				continue
			}
			if p.intent == nil || p.outcome != nil || p.intent.ID != e.ID {
				t.Fatalf("outcome without its intent for %s: %+v", e.Reason, e)
			}
			p.outcome = e
		default:
			t.Fatalf("audit phase %q", e.Phase)
		}
	}
	if len(ids) != len(audited) {
		t.Fatalf("audit ids are not unique per write")
	}

	counts := map[write.Outcome]int{}
	for i := range ops {
		op := &ops[i]
		counts[op.res.Outcome]++
		a := audited[op.req.Reason]
		if op.plan.Refused != "" {
			// Refused before sending: a record that was not in a state the
			// action applies to, or gone (nothing audited), or one that
			// changed while it was read (a conflict, audited alone).
			switch {
			case op.res.Outcome == write.Conflict && (a == nil || a.intent != nil || a.outcome.Outcome != write.Conflict):
				t.Fatalf("conflict at plan (%s) not audited alone: %+v", op.plan.Refused, a)
			case op.res.Outcome != write.Conflict && (a != nil || (op.res.Outcome != write.Refused && op.res.Outcome != write.NotFound)):
				t.Fatalf("write refused at plan (%s) ended %q, audited %v", op.plan.Refused, op.res.Outcome, a != nil)
			}
			continue
		}
		if a == nil || a.outcome == nil {
			t.Fatalf("write %s %s was sent without an intent and an outcome in the audit log", op.req.Kind, op.req.Key)
		}
		if a.outcome.Outcome != op.res.Outcome || a.intent.Before.State != op.plan.Before.State ||
			a.intent.Before.Fingerprint != op.plan.Before.Fingerprint || a.intent.Key != op.req.Key {
			t.Fatalf("audit disagrees with the result: %+v / %+v", a.outcome, op.res)
		}
		switch op.res.Outcome {
		case write.Applied:
		case write.Conflict, write.NotFound:
			continue // changed nothing: checked against the final records below
		default:
			t.Fatalf("a write on a healthy connection ended %q: %s", op.res.Outcome, op.res.Detail)
		}
		// Applied: on exactly the record it planned against.
		before := a.intent.Before
		l := lives[before.Fingerprint]
		if l == nil || l.key != op.req.Key {
			t.Fatalf("applied %s on %s planned against fingerprint %q, which the application never reserved there", op.req.Kind, op.req.Key, before.Fingerprint)
		}
		switch {
		case op.req.Kind == write.KindFail:
			if before.State != "PROCESSING" || l.fail != nil {
				t.Fatalf("fail applied on a %s record (failed before: %v)", before.State, l.fail != nil)
			}
			l.fail = op
		case op.req.Kind == write.KindReconcile:
			if before.State != "PROCESSING" && before.State != "FAILED" || l.recon != nil {
				t.Fatalf("reconcile applied on a %s record (reconciled before: %v)", before.State, l.recon != nil)
			}
			l.recon = op
		case op.plan.Delete:
			l.deletes = append(l.deletes, op)
		default:
			l.expires = append(l.expires, op)
		}
	}

	// Each lifetime left PROCESSING once at most: the application's COMPLETE
	// and the tool's fail or reconcile exclude each other (a fail overwriting
	// a completion, or a completion of a failed record, is a lost update).
	// Only a failed record may then be reconciled.
	for f, l := range lives {
		if l.recon != nil && audited[l.recon.req.Reason].intent.Before.State == "FAILED" {
			b := audited[l.recon.req.Reason].intent.Before
			if l.fail == nil || b.Fields["reason"] != l.fail.req.Reason {
				t.Fatalf("lifetime %s: reconciled as FAILED (%q), but not failed by the tool", f, b.Fields["reason"])
			}
		} else if l.recon != nil && l.fail != nil {
			t.Fatalf("lifetime %s: reconciled as PROCESSING and also failed (a lost update)", f)
		}
		if n := btoi(l.complete != nil) + btoi(l.fail != nil) + btoi(l.recon != nil && l.fail == nil); n > 1 {
			t.Fatalf("lifetime %s of %s left PROCESSING %d times: complete %v, fail %v, reconcile %v (a lost update)",
				f, l.key, n, l.complete != nil, l.fail != nil, l.recon != nil)
		}
		if len(l.deletes) > 1 {
			t.Fatalf("lifetime %s deleted %d times", f, len(l.deletes))
		}
		// Writes that acted on a later state saw that state; a delete, after
		// which nothing can happen, saw the lifetime's last state.
		for _, op := range append(append([]*toolOp{}, l.deletes...), l.expires...) {
			b := audited[op.req.Reason].intent.Before
			last := "PROCESSING"
			switch {
			case l.recon != nil, l.complete != nil:
				last = "SUCCEEDED"
			case l.fail != nil:
				last = "FAILED"
			}
			if op.plan.Delete && b.State != last {
				t.Fatalf("lifetime %s: deleted as %s, but it went on to %s", f, b.State, last)
			}
			switch b.State {
			case "PROCESSING":
			case "SUCCEEDED":
				switch {
				case l.complete != nil:
					if !loggedIs(b, "response", l.complete.resp) || b.Fields["status"] != strconv.Itoa(l.complete.status) {
						t.Fatalf("lifetime %s: %s planned against response %q (%+v), the application wrote %q", f, op.req.Kind, b.Fields["response"], b.Omitted["response"], l.complete.resp)
					}
				case l.recon != nil:
					if b.Fields["reconciled_ref"] != l.recon.req.Ref {
						t.Fatalf("lifetime %s: planned against ref %q, reconciled with %q", f, b.Fields["reconciled_ref"], l.recon.req.Ref)
					}
				default:
					t.Fatalf("lifetime %s: %s planned against SUCCEEDED, but nothing completed it", f, op.req.Kind)
				}
			case "FAILED":
				if l.fail == nil || b.Fields["reason"] != l.fail.req.Reason {
					t.Fatalf("lifetime %s: planned against FAILED %q, failed by %v", f, b.Fields["reason"], l.fail != nil)
				}
			default:
				t.Fatalf("lifetime %s: unexpected state %q", f, b.State)
			}
		}
	}

	// The final records: each key holds its current lifetime exactly as its
	// last write left it; every other lifetime was ended by an applied delete.
	current := map[string]bool{}
	for _, key := range keys {
		got := r.raw(key)
		if got == nil {
			continue
		}
		f := got["fingerprint"]
		l := lives[f]
		if l == nil || l.key != key {
			t.Fatalf("%s holds fingerprint %q, never reserved there: %q", key, f, got)
		}
		current[f] = true
		if len(l.deletes) > 0 {
			t.Fatalf("%s: lifetime %s was deleted (applied) yet is still there", key, f)
		}
		want := map[string]string{"fingerprint": f, "state": "PROCESSING"}
		if l.complete != nil {
			want = map[string]string{"fingerprint": f, "state": "SUCCEEDED", "status": strconv.Itoa(l.complete.status), "response": l.complete.resp}
		}
		if l.fail != nil {
			fs := ks.Schema.Actions.Fail
			want = map[string]string{"fingerprint": f, "state": "FAILED", "status": strconv.Itoa(fs.Status), "response": fs.Response,
				"failed_by": testUser, "reason": l.fail.req.Reason, "failed_at": got["failed_at"]}
		}
		if l.recon != nil { // over a failed record's fields, if it was failed first
			want["state"], want["status"], want["response"] = "SUCCEEDED", "200", `{"reconciled":true,"ref":"`+l.recon.req.Ref+`"}`
			want["reconciled_ref"], want["reconciled_by"], want["reason"] = l.recon.req.Ref, testUser, l.recon.req.Reason
			want["reconciled_at"] = got["reconciled_at"]
		}
		if !sameMap(got, want) {
			t.Fatalf("%s (lifetime %s):\n got %q\nwant %q", key, f, got, want)
		}
		// A TTL of hours was set by one applied expire of this lifetime.
		if ttl := r.pttl(key); ttl > time.Hour {
			n := (ttl - 3*time.Hour + time.Minute - 1) / time.Minute
			op := byReason["race-"+strconv.FormatInt(int64(n), 10)]
			if op == nil || op.res.Outcome != write.Applied || op.ttl == 0 || op.req.Key != key ||
				audited[op.req.Reason].intent.Before.Fingerprint != f {
				t.Fatalf("%s has TTL %v, set by no applied expire of its lifetime (write %d: %+v)", key, ttl, n, op)
			}
		}
	}
	survived, explained := 0, 0
	for f, l := range lives {
		if current[f] {
			if l.complete != nil {
				survived++
			}
			continue
		}
		if len(l.deletes) != 1 {
			t.Fatalf("lifetime %s of %s vanished without an applied delete", f, l.key)
		}
		if l.complete != nil {
			explained++
		}
	}
	if survived+explained != len(completes) {
		t.Fatalf("%d completions: %d still there, %d removed by an audited delete", len(completes), survived, explained)
	}
	// Checked last, so that a broken guard shows as the invariant it broke.
	if !enough() {
		t.Fatalf("the race did not produce enough interleavings in 20s: applied %d/%d/%d/%d, conflicts %d, re-reserved %d",
			appliedBy[0].Load(), appliedBy[1].Load(), appliedBy[2].Load(), appliedBy[3].Load(), conflicts.Load(), reReserved.Load())
	}
	t.Logf("%v: %d reservations (%d after a delete), %d completions (%d later deleted by the tool); tool writes %v, applied fail/reconcile/delete/expire %d/%d/%d/%d, conflicts at write time %d",
		time.Since(start).Round(time.Millisecond), len(starts), reReserved.Load(), len(completes), explained, counts,
		appliedBy[0].Load(), appliedBy[1].Load(), appliedBy[2].Load(), appliedBy[3].Load(), conflicts.Load())
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// loggedIs says whether an audited snapshot holds want in field name: the
// value itself, or (a payload or a long value) its length and digest.
func loggedIs(b *write.Snapshot, name, want string) bool {
	if d, ok := b.Omitted[name]; ok {
		return d.SHA256 == audit.Digest(want, "").SHA256 && d.Len == int64(len(want))
	}
	return b.Fields[name] == want
}
