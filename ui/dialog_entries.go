package ui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
	"github.com/idemctl/idemctl/ui/common"
	"github.com/idemctl/idemctl/ui/streams"
)

// The write dialog on pending entries (the Streams screen's T, A, D):
// what ui/streams says of entries, run by the one dialog.

// openEntryWrite opens the write dialog of kind on the entries a write
// key takes.
func (m *Model) openEntryWrite(kind write.Kind) tea.Cmd {
	if why := streams.Readable(m.Common); why != "" {
		m.Status = why
		return nil
	}
	if !m.CanWrite() {
		m.Status = m.OffHint(m.screen == screenStreams)
		return nil
	}
	targets, onMarks := m.streams.Targets()
	if len(targets) == 0 {
		return nil
	}
	w := max(m.Width-20, 20)
	d := &dialog{kind: kind, entries: targets, onMarks: onMarks, step: stepForm,
		labels: []string{"Reason"}, inputs: []textinput.Model{newInput("why (required)", "", w)}}
	switch kind {
	case write.KindRetry:
		d.labels = append(d.labels, "Mode", "To")
		d.inputs = append(d.inputs, newInput("claim, claim-justid or redeliver", string(write.RetryClaim), w),
			newInput("the recovery consumer (empty: each keyspace's)", m.streams.SharedDefault(targets, streams.RecoveryOf), w))
	case write.KindDeadLetter:
		d.labels = append(d.labels, "To")
		d.inputs = append(d.inputs, newInput("the dead-letter stream (empty: each keyspace's dead_letter)", m.streams.SharedDefault(targets, streams.DeadLetterOf), w))
	}
	m.dialog = d.start(m.shared)
	return m.dialog.focusInput()
}

// planEntryWrites checks the form and plans each entry in the background:
// each is read as it is now and compared with what the operator saw.
func (d *dialog) planEntryWrites(reason string) tea.Cmd {
	reqs, why := streams.Requests(streams.Form{Kind: d.kind, Reason: reason, Mode: d.value("Mode"), To: d.value("To"),
		StreamSpaces: d.Opts.StreamSpaces}, d.entries)
	if why != "" {
		d.errText = why
		return nil
	}
	d.errText, d.step = "", stepPlanning
	ex, ctx := d.Opts.Executor, d.Ctx
	return func() tea.Msg {
		plans := make([]*actions.Plan, 0, len(reqs))
		for _, r := range reqs {
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			p, err := ex.PlanEntry(pctx, r)
			cancel()
			if err != nil {
				return planMsg{err: fmt.Errorf("entry %s of %s: %s", inspect.Sanitize(r.ID), inspect.Sanitize(r.Stream), inspect.Line(err.Error()))}
			}
			plans = append(plans, p)
		}
		return planMsg{plans: plans}
	}
}

// wroteEntries reports whether the dialog's plans write pending entries
// (an undo of a retry included).
func (d *dialog) wroteEntries() bool {
	for _, p := range d.plans {
		if p.Entry() != nil {
			return true
		}
	}
	return d.entries != nil
}

// resultKey is what the dialog calls result i's target: a record's key,
// or an entry's stream and ID.
func (d *dialog) resultKey(i int) string {
	if i < len(d.plans) {
		if e := d.plans[i].Entry(); e != nil {
			return e.Stream + " " + e.ID
		}
	}
	return d.results[i].Key
}

// noun is what the dialog writes, as its texts say it.
func (d *dialog) noun() string {
	if d.entries != nil {
		return "entries"
	}
	return "records"
}

// entryTitle is the dialog's title on entries: "RETRY 2 pending entries".
func (d *dialog) entryTitle() string {
	noun := "pending entries"
	if len(d.entries) == 1 {
		noun = "pending entry"
	}
	return fmt.Sprintf("%s %s %s", strings.ToUpper(string(d.kind)), common.Count(len(d.entries)), noun)
}

// entrySample is the form's line naming the entries.
func (d *dialog) entrySample() string {
	var ids []string
	for i, t := range d.entries {
		if i == 3 {
			ids = append(ids, "… +"+common.Count(len(d.entries)-3))
			break
		}
		ids = append(ids, d.shownKey(string(t.Entry.Stream)+" "+t.Entry.ID, 10))
	}
	return "entries: " + strings.Join(ids, ", ")
}

// entryPlan is the confirm step on entries: one line per entry saying
// what changes (or why it cannot), every one of them (the plan scrolls),
// grouped under its stream and group; and under it, in sight, whether
// the writes can be undone, said before they run.
func (d *dialog) entryPlan() (plan, foot []string) {
	s := d.Styles
	head := ""
	for i, p := range d.plans {
		e := d.entries[i].Entry
		if h := inspect.Sanitize(string(e.Stream)) + " · group " + inspect.Sanitize(string(e.Group)); h != head {
			head = h
			plan = append(plan, s.Title.Render(common.FitMiddle(h, d.Width)))
		}
		plan = append(plan, strings.Split(streams.PlanLine(d.Styles, d.Width, e.ID, p), "\n")...)
	}
	for _, p := range d.plans {
		if p.Refused == "" && p.UndoNote != "" {
			foot = append(foot, strings.Split(common.WrapHang(s.Error.Render("NOT undoable: "), inspect.Sanitize(units.OneLine(p.UndoNote)), d.Width), "\n")...)
			break
		}
	}
	if d.kind == write.KindRetry && d.runnable() > 0 {
		foot = append(foot, s.Dim.Render(common.Fit("undoable: u on the Writes screen hands an entry back as it was", d.Width)))
	}
	return plan, foot
}
