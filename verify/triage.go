package verify

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

// DefaultReason is triage's audit reason when the operator gives none: the
// evidence (each hook's verdict and detail) says the rest.
const DefaultReason = "triage: verified against the source of truth"

// Item is one record through triage, for the CLI and the TUI alike.
type Item struct {
	Rec    inspect.Record
	Saw    *actions.Seen // what the operator saw (--from-file); then the record as the hook was asked about it
	Hook   *Hook
	Result Result
	Asked  bool          // the hook ran
	Left   string        // why it is left alone ("" when planned); may be set by the caller
	Plan   *actions.Plan // the write its verdict leads to
}

// Triage takes records through one triage: each is checked (processing,
// past its processing timeout, a hook for its keyspace), pinned (its
// state, fingerprint and whole version read through the planner, so the
// write is a compare-and-set against exactly the record the hook was asked
// about), its hook asked at the hook's concurrency, and its verdict made
// a plan (see ActionFor). Items the caller already left alone are skipped.
// progress, if set, is called after each hook run. An error is a failed
// read of a record; a cancelled ctx leaves the items not asked unknown.
func Triage(ctx context.Context, ex *actions.Executor, items []*Item, hooks map[string]*Hook, reason string, progress func(done, total int)) error {
	if err := pinAll(ctx, ex, items, hooks, reason); err != nil {
		return err
	}
	askHooks(ctx, items, progress)
	for _, it := range items {
		if it.Left != "" {
			continue
		}
		act := ActionFor(&it.Rec, it.Result, it.Saw, reason, filepath.Base(it.Hook.Command[0]))
		if act.Left != "" {
			it.Left = act.Left
			continue
		}
		p, err := ex.Plan(ctx, act.Request)
		if err != nil {
			return fmt.Errorf("reading %s: %w", inspect.Sanitize(it.Rec.Key), err)
		}
		it.Plan = p
	}
	return nil
}

// Plans are the items' planned writes, in order.
func Plans(items []*Item) []*actions.Plan {
	var out []*actions.Plan
	for _, it := range items {
		if it.Plan != nil {
			out = append(out, it.Plan)
		}
	}
	return out
}

func pinAll(ctx context.Context, ex *actions.Executor, items []*Item, hooks map[string]*Hook, reason string) error {
	for _, it := range items {
		if it.Left != "" {
			continue
		}
		r := &it.Rec
		if it.Left = notStuck(r); it.Left != "" {
			continue
		}
		if it.Hook = hooks[r.Keyspace.Name]; it.Hook == nil {
			it.Left = fmt.Sprintf("keyspace %s has no verify hook (keyspaces[].verify in the config)", r.Keyspace.Name)
			continue
		}
		probe, err := ex.Plan(ctx, actions.Request{Kind: write.KindFail, Keyspace: r.Keyspace, Key: r.Key, Reason: reason, Saw: it.Saw})
		if err != nil {
			return fmt.Errorf("reading %s: %w", inspect.Sanitize(r.Key), err)
		}
		b := probe.Before
		switch {
		case probe.Outcome == write.Conflict || probe.Outcome == write.NotFound:
			it.Left = probe.Refused
		case b.State != r.RawState || b.Fingerprint != r.Fingerprint:
			it.Left = "the record changed since it was read (the application is writing it): not verified"
		default:
			it.Saw = &actions.Seen{State: b.State, Fingerprint: b.Fingerprint, Version: b.Version}
		}
	}
	return nil
}

// notStuck says why a record is not one to verify: not processing, or not
// known to be past its processing timeout (a request still in flight must
// never be judged by what it has not written yet).
func notStuck(r *inspect.Record) string {
	switch {
	case r.Keyspace == nil:
		return "no keyspace matches this key"
	case r.State != inspect.StateProcessing:
		return fmt.Sprintf("the record is %s, not processing: nothing to triage", r.State)
	case r.Stale():
		return ""
	case r.AgeMs < 0:
		return "its age is unknown, so it may still be in flight: not verified"
	}
	return fmt.Sprintf("processing for %s, within the keyspace's processing timeout (%s): it may still be in flight; not verified",
		units.FormatMs(r.AgeMs), r.Keyspace.ProcessingTimeout)
}

// askHooks runs each keyspace's hook over its pinned records.
func askHooks(ctx context.Context, items []*Item, progress func(done, total int)) {
	byHook := map[*Hook][]*Item{}
	var order []*Hook
	total := 0
	for _, it := range items {
		if it.Left == "" {
			if byHook[it.Hook] == nil {
				order = append(order, it.Hook)
			}
			byHook[it.Hook] = append(byHook[it.Hook], it)
			total++
		}
	}
	done := 0
	for _, h := range order {
		group := byHook[h]
		recs := make([]*inspect.Record, len(group))
		for i, it := range group {
			recs[i] = &it.Rec
		}
		h.VerifyAll(ctx, recs, func(i int, r Result) {
			group[i].Result, group[i].Asked = r, true
			done++
			if progress != nil {
				progress(done, total)
			}
		})
	}
}

// Verdict is what the item's line shows: the hook's verdict, or not_asked.
func (it *Item) Verdict() string {
	if it.Asked {
		return string(it.Result.Verdict)
	}
	return "not_asked"
}

// Action is what happens to the record: its write, or "left alone".
func (it *Item) Action() string {
	if it.Plan == nil || it.Left != "" {
		return "left alone"
	}
	return string(it.Plan.Kind)
}

// Note explains the line: why it is left alone, or the hook's evidence.
func (it *Item) Note() string {
	if it.Left != "" {
		return it.Left
	}
	parts := []string{}
	if it.Result.Ref != "" {
		parts = append(parts, "ref "+it.Result.Ref)
	}
	if it.Result.Detail != "" {
		parts = append(parts, it.Result.Detail)
	}
	return strings.Join(parts, "; ")
}

// Counts counts items by Verdict.
func Counts(items []*Item) map[string]int {
	out := map[string]int{}
	for _, it := range items {
		out[it.Verdict()]++
	}
	return out
}

// CountsText is "done 5, not_done 3, unknown 2" in that order.
func CountsText(items []*Item) string {
	c := Counts(items)
	var parts []string
	for _, v := range []string{string(Done), string(NotDone), string(Unknown), "not_asked"} {
		if c[v] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", v, c[v]))
		}
	}
	return strings.Join(parts, ", ")
}
