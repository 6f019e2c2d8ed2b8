package actions

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"
	"unicode/utf8"

	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/actions/write"
)

// A plan part holds at most planPartKeys keys and planPartBytes of them,
// well under MaxAuditLine even when every byte needs escaping.
const (
	planPartKeys  = 1000
	planPartBytes = 128 << 10
)

// planChunks splits a run's plans into plan parts.
func planChunks(plans []*Plan) [][]*Plan {
	var out [][]*Plan
	start, size := 0, 0
	for i, p := range plans {
		if i > start && (i-start == planPartKeys || size+len(p.Key) > planPartBytes) {
			out = append(out, plans[start:i])
			start, size = i, 0
		}
		size += len(p.Key)
	}
	return append(out, plans[start:])
}

// RunID names a run by what it asks for: the action, its parameters and
// every target with what the operator saw, in order. Running the same
// input again (the same --from-file, the same printed command) gives the
// same id, so the audit log tells what an earlier execution already did.
func RunID(plans []*Plan) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	for _, p := range plans {
		r := p.Request
		ks := ""
		if r.Keyspace != nil {
			ks = r.Keyspace.Name
		}
		_ = enc.Encode([]any{r.Kind, ks, base64.StdEncoding.EncodeToString([]byte(r.Key)), r.Reason, r.TTL.Mode, int64(r.TTL.D),
			r.Ref, r.Status, r.Response, r.Saw, r.ExpectState, r.ExpectFingerprint})
		if p.reverts != nil { // an undo is told apart by the write it reverts
			_ = enc.Encode(p.reverts.ID)
		}
		if p.entry != nil { // the entry, beside its stream (Key)
			_ = enc.Encode(p.entry.runKey())
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// planEntries are a run's plan lines, all sharing one id (this execution).
func (e *Executor) planEntries(run string, plans []*Plan) []audit.Entry {
	runnable := 0
	kh := sha256.New()
	for _, p := range plans {
		if p.Refused == "" {
			runnable++
		}
		kh.Write([]byte(p.Key))
		kh.Write([]byte{0})
	}
	sum := hex.EncodeToString(kh.Sum(nil))
	chunks := planChunks(plans)
	id := audit.NewID()
	var out []audit.Entry
	for part, chunk := range chunks {
		rp := &audit.RunPlan{Part: part + 1, Parts: len(chunks), Planned: len(plans), Runnable: runnable, KeysSHA256: sum}
		for i, p := range chunk {
			rp.Keys = append(rp.Keys, p.Key)
			if !utf8.ValidString(p.Key) {
				if rp.KeysBase64 == nil {
					rp.KeysBase64 = map[int]string{}
				}
				rp.KeysBase64[i] = base64.StdEncoding.EncodeToString([]byte(p.Key))
			}
		}
		first := chunk[0]
		out = append(out, audit.Entry{ID: id, Phase: audit.PhasePlan, Run: run, Identity: e.Identity,
			Action: first.Kind, Reason: first.Reason, RunPlan: rp})
	}
	return out
}

// runTrace is what the log says a run did, key by key.
type runTrace struct {
	applied map[string]string      // key → time of its applied outcome
	inDoubt map[string]audit.Entry // key → an intent with no outcome at all
}

// traceRun reads what earlier executions of run did.
func traceRun(path, run string) (*runTrace, error) {
	mark := []byte(`"run":"` + run + `"`)
	intents := map[string]audit.Entry{}
	closed := map[string]bool{}
	t := &runTrace{applied: map[string]string{}, inDoubt: map[string]audit.Entry{}}
	_, _, err := audit.Scan(path, func(raw []byte) bool { return bytes.Contains(raw, mark) }, func(e audit.Entry) {
		if e.Run != run {
			return
		}
		switch e.Phase {
		case audit.PhaseIntent:
			intents[e.ID] = e
		case audit.PhaseOutcome:
			closed[e.ID] = true
			if e.Outcome == write.Applied {
				t.applied[auditTarget(e)] = e.Time
			}
		}
	})
	if err != nil {
		return nil, err
	}
	for id, in := range intents {
		if !closed[id] {
			t.inDoubt[auditTarget(in)] = in
		}
	}
	return t, nil
}

// MarkAlreadyApplied looks in the audit log for earlier executions of the
// same run (RunID) and marks the plans they already applied: they are
// reported as already_applied, not written again and not called conflicts.
// A write whose intent is in the log without an outcome (the run was
// killed in between) counts as applied when the record is now exactly
// what that intent planned; its intent is then closed by the next run.
// It returns how many plans it marked.
func (e *Executor) MarkAlreadyApplied(plans []*Plan) (int, error) {
	path := e.auditPath
	if path == "" && e.Audit != nil {
		path = e.Audit.Path()
	}
	if path == "" || len(plans) == 0 {
		return 0, nil
	}
	run := RunID(plans)
	t, err := traceRun(path, run)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reading the audit log: %w", err)
	}
	n := 0
	for _, p := range plans {
		if at, ok := t.applied[planTarget(p)]; ok {
			p.Refused, p.Outcome = "applied by an earlier execution of this run ("+run+") at "+at, write.AlreadyApplied
			n++
			continue
		}
		in, ok := t.inDoubt[planTarget(p)]
		if !ok || in.After == nil {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, in.Time)
		if err != nil || !matchesLogged(p.Before, in.After, time.Since(at)) {
			continue
		}
		p.Refused, p.Outcome = "applied by an earlier execution of this run ("+run+"), which stopped before recording it: the record is as that write left it", write.AlreadyApplied
		p.settles = &in
		n++
	}
	return n, nil
}

// matchesLogged compares a record read now with a snapshot from the log,
// whose long values are digests.
func matchesLogged(now write.Snapshot, want *write.Snapshot, elapsed time.Duration) bool {
	w := *want
	for k, d := range want.Omitted {
		var cur string
		switch k {
		case "(state)":
			cur, w.State = now.State, now.State
		case "(fingerprint)":
			cur, w.Fingerprint = now.Fingerprint, now.Fingerprint
		default:
			cur = now.Fields[k]
		}
		if d.SHA256 == "" {
			continue // never read whole: the rest must tell
		}
		if _, cut := now.Omitted[k]; cut || audit.Digest(cur, "").SHA256 != d.SHA256 {
			return false
		}
	}
	return sameOutcome(now, w, !w.Exists, elapsed)
}
