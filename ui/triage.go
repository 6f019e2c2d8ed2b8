package ui

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
	"github.com/idemctl/idemctl/ui/common"
	"github.com/idemctl/idemctl/verify"
)

// kindTriage is V's dialog: not one write but the plan the keyspaces'
// verify hooks make of their verdicts (reconcile, fail, or left alone),
// confirmed and applied like the other writes.
const kindTriage write.Kind = "triage"

// triageMsg carries the hooks' verdicts and the plans they make.
type triageMsg struct {
	items []*verify.Item
	err   error
}

// triageOff is why V cannot ask the verify hooks here, or "": hooks run
// only in a session that can write, and only where the config has some.
func (c *shared) triageOff() string {
	if !c.CanWrite() {
		return "V runs the verify hooks only where writes are enabled (start with --write, or writes: true in the profile)"
	}
	if len(c.Opts.Hooks) == 0 {
		return "no verify hook: give a keyspace verify: in the config (see docs/writes.md, Triage)"
	}
	return ""
}

// askHooks starts the triage of the dialog's targets in the background:
// each is pinned as the operator saw it, its hook asked, its verdict
// planned. esc cancels the hooks.
func (d *dialog) askHooks() tea.Cmd {
	d.step = stepPlanning
	items := make([]*verify.Item, len(d.targets))
	for i, r := range d.targets {
		items[i] = &verify.Item{Rec: r, Saw: &actions.Seen{State: r.RawState, Fingerprint: r.Fingerprint}}
	}
	ctx, cancel := context.WithCancel(d.Ctx)
	d.cancel = cancel
	ex, hooks := d.Opts.Executor, d.Opts.Hooks
	return func() tea.Msg {
		err := verify.Triage(ctx, ex, items, hooks, verify.DefaultReason, nil)
		return triageMsg{items: items, err: err}
	}
}

func (d *dialog) onTriage(msg triageMsg) {
	if d == nil || d.kind != kindTriage || d.step != stepPlanning {
		return
	}
	d.cancel()
	d.triage, d.step = msg.items, stepConfirm
	if msg.err != nil {
		d.errText = "could not read the records: " + inspect.Sanitize(msg.err.Error())
	} else {
		d.plans = verify.Plans(msg.items)
	}
	d.focusInput()
}

// planningText is the dialog's line while it reads (or asks).
func planningText(d *dialog) string {
	if d.kind == kindTriage {
		return fmt.Sprintf("asking the verify hooks about %s record(s)…", common.Count(len(d.targets)))
	}
	return "reading the records…"
}

// triageList is the triage's plan: its column titles (top, kept in sight),
// each record's VERDICT, what the plan does with it and why, every one of
// them (the plan scrolls), the ones left alone first; and under it, in
// sight, the counts.
func (d *dialog) triageList() (top, plan, foot []string) {
	s := d.Styles
	top = []string{s.Dim.Render(fmt.Sprintf("%-9s %-10s %s", "VERDICT", "ACTION", "RECORD — WHY"))}
	// The ones left alone (unknown, errors) first: they are what a
	// reader who stops early must not miss.
	items := slices.Clone(d.triage)
	judged := func(v string) int { // 0: left alone, listed first
		if v == string(verify.Done) || v == string(verify.NotDone) {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(items, func(a, b *verify.Item) int {
		return cmp.Compare(judged(a.Verdict()), judged(b.Verdict()))
	})
	for _, it := range items {
		verdict := fmt.Sprintf("%-9s", it.Verdict())
		if it.Verdict() != string(verify.Done) && it.Verdict() != string(verify.NotDone) {
			verdict = s.Error.Render(verdict)
		}
		head := fmt.Sprintf("%s %-10s %s", verdict, it.Action(), d.shownKey(displayKey(&it.Rec), 40))
		row := head + " — " + inspect.Sanitize(it.Note())
		if ansi.StringWidth(row) > d.Width {
			// The why is what the operator confirms: never cut, it goes
			// under the record, wrapped.
			row = common.Fit(head, d.Width) + "\n" + hang(strings.Repeat(" ", 21)+"— ", inspect.Sanitize(it.Note()), d.Width)
		}
		plan = append(plan, strings.Split(row, "\n")...)
	}
	foot = []string{"", fmt.Sprintf("verdicts: %s · unknown ones are left alone", units.Clip(verify.CountsText(d.triage), max(d.Width-40, 20)))}
	return top, plan, foot
}
