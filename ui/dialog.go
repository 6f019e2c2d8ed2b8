package ui

import (
	"context"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/progress"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
	"github.com/idemctl/idemctl/ui/common"
	"github.com/idemctl/idemctl/ui/streams"
	"github.com/idemctl/idemctl/verify"
)

// The write dialog walks: profile name (protected profiles, once) → form →
// planning (reads each record) → confirm (diff; type the count for several)
// → running (rate-limited, cancellable) → done (per-key summary).
// This file holds the model, its keys and its view; each step's own work
// is in dialog_form.go, dialog_confirm.go and dialog_run.go.
type dialogStep int

const (
	stepProfile dialogStep = iota
	stepForm
	stepPlanning
	stepConfirm
	stepRunning
	stepDone
)

type dialog struct {
	*shared
	w, h int

	kind     write.Kind
	targets  []inspect.Record // copies: what the operator saw
	entries  []streams.Mark   // a write on pending entries: what the operator saw (targets is nil)
	needsRef bool             // a target's schema records a reference
	onMarks  bool             // the targets are the marked records
	step     dialogStep
	inputs   []textinput.Model
	labels   []string
	focus    int
	confirm  textinput.Model
	plans    []*actions.Plan
	results  []actions.Result
	done     int
	bar      progress.Model
	cancel   context.CancelFunc
	errText  string
	// triage: the verdicts behind the plans (V), nil for the other writes
	triage []*verify.Item
	undoID string // an undo: the audit id of the write it reverts
	// The confirm step's plan scrolls (dialog_plan.go): its first line
	// shown, and the lines it had room for when last drawn.
	scroll, page int
	drawn        *planText // the plan as drawn, for its width
}

// expireDefault is the E dialog's TTL until the operator types another.
const expireDefault = "10m"

func newInput(placeholder, value string, width int) textinput.Model {
	in := textinput.New()
	in.Prompt = ""
	in.Placeholder = placeholder
	in.SetValue(value)
	in.CharLimit = 512
	in.SetWidth(width)
	return in
}

// openDialog starts a write on the marked records, or the one under the cursor.
func (m *Model) openDialog(kind write.Kind) tea.Cmd {
	if !m.CanWrite() {
		m.Status = m.OffHint(m.screen == screenStreams)
		return nil
	}
	targets, onMarks := m.recordsSized().writeTargets()
	if len(targets) == 0 {
		return nil
	}
	cmd := m.openDialogOn(kind, targets)
	if m.dialog != nil {
		m.dialog.onMarks = onMarks
	}
	return cmd
}

// openDialogOn starts a write on the given records (the detail screen's
// record, or the marked ones).
func (m *Model) openDialogOn(kind write.Kind, targets []inspect.Record) tea.Cmd {
	if !m.CanWrite() {
		m.Status = m.OffHint(m.screen == screenStreams)
		return nil
	}
	w := max(m.Width-20, 20)
	d := &dialog{kind: kind, targets: targets, step: stepForm, needsRef: needsRef(kind, targets)}
	// The TTL field starts at the action's default, shown as its name.
	ttlDefault := string(actions.TTLRetention)
	switch kind {
	case write.KindExpire:
		d.labels = []string{"TTL", "Reason"}
		// Ten minutes, not 0: a slip of enter must not delete; 0 is typed on purpose.
		d.inputs = []textinput.Model{newInput("a duration, e.g. 10m; 0 deletes now", expireDefault, w), newInput("why (required)", "", w)}
	case write.KindFail:
		d.labels = []string{"Reason", "TTL"}
		d.inputs = []textinput.Model{newInput("why (required)", "", w), newInput("retention, keep, or a duration", ttlDefault, w)}
	case write.KindUndo:
		d.labels = []string{"Reason"}
		d.inputs = []textinput.Model{newInput("why (required)", "", w)}
	case write.KindReconcile:
		ref := "optional: reference in the source of truth (e.g. order id)"
		if d.needsRef {
			ref = "reference in the source of truth, e.g. order id (required)"
		}
		d.labels = []string{"Ref", "Reason", "TTL"}
		d.inputs = []textinput.Model{newInput(ref, "", w),
			newInput("why (required)", "", w), newInput("retention, keep, or a duration", ttlDefault, w)}
	}
	m.dialog = d.start(m.shared)
	if kind == kindTriage && d.step == stepForm {
		return m.dialog.askHooks() // no form: the hooks give ref, status and response
	}
	return m.dialog.focusInput()
}

// start readies d to show, asking first for a protected profile's name.
func (d *dialog) start(c *shared) *dialog {
	d.shared = c
	d.confirm = newInput("", "", 12)
	d.bar = progress.New(progress.WithWidth(max(c.Width-10, 10)), progress.WithoutPercentage())
	if c.Opts.Executor.Policy.NeedsProfileName() {
		d.step = stepProfile
		d.confirm.Placeholder = c.Opts.Profile
	}
	return d
}

func (d *dialog) focusInput() tea.Cmd {
	for i := range d.inputs {
		d.inputs[i].Blur()
	}
	d.confirm.Blur()
	switch d.step {
	case stepForm:
		return d.inputs[d.focus].Focus()
	case stepProfile, stepConfirm:
		return d.confirm.Focus()
	}
	return nil
}

func (d *dialog) value(label string) string {
	for i, l := range d.labels {
		if l == label {
			return strings.TrimSpace(d.inputs[i].Value())
		}
	}
	return ""
}

// onDialogKey is a key while the dialog is open: closing it, and starting
// the run (its writes report to the root), are the root's; the dialog
// takes the rest.
func (m *Model) onDialogKey(msg tea.KeyPressMsg) tea.Cmd {
	d := m.dialog
	switch key := msg.String(); {
	case key == "esc" && d.step != stepRunning:
		if d.cancel != nil {
			d.cancel() // hooks still asking (V)
		}
		m.dialog = nil
		return nil
	case d.step == stepConfirm && key == "enter":
		if m.writeCh = d.run(); m.writeCh == nil {
			return nil
		}
		return waitWrite(m.writeCh)
	case d.step == stepDone && (key == "enter" || key == "q" || key == "tab"):
		return m.closeDialog(key == "tab")
	}
	return m.route(d, msg)
}

// closeDialog closes a finished write and shows its outcome: the table
// rescanned, the record re-read or the streams read anew, or the Writes
// screen (toWrites).
func (m *Model) closeDialog(toWrites bool) tea.Cmd {
	d := m.dialog
	m.dialog = nil
	if toWrites { // straight to what was written, as the dialog says
		m.screen = screenWrites
		m.writes.Open()
	}
	if d.wroteEntries() {
		return m.streams.AfterWrite(d.onMarks)
	}
	if d.onMarks {
		m.records.dropMarks() // written: a second write would need them marked again
	}
	if m.screen == screenDetail && m.detail.cur != nil {
		// Opened from the detail screen: show the record as written.
		return tea.Batch(m.scan.start(), m.detail.fetch())
	}
	return m.scan.start() // show the outcome in the table
}

// View renders the dialog in place of the screen body.
func (d *dialog) View() string {
	s := d.Styles
	var b strings.Builder
	title := fmt.Sprintf("%s %s record(s)", strings.ToUpper(string(d.kind)), common.Count(len(d.targets)))
	if d.entries != nil {
		title = d.entryTitle()
	}
	b.WriteString(s.Title.Render(title) + s.Dim.Render("  (esc cancels)") + "\n\n")
	switch d.step {
	case stepProfile:
		fmt.Fprintf(&b, "Profile %q is protected. Type its name to allow writes for this session:\n\n  %s\n", d.Opts.Profile, d.confirm.View())
	case stepForm:
		for i, l := range d.labels {
			marker := "  "
			if i == d.focus {
				marker = "> "
			}
			fmt.Fprintf(&b, "%s%-7s %s\n", marker, l, d.inputs[i].View())
		}
		if d.kind == write.KindExpire {
			b.WriteString("\n" + s.Dim.Render("TTL: the record expires after it (10m: in ten minutes); 0 deletes it now") + "\n")
		}
		if hint := streams.FormHint(d.kind); d.entries != nil && hint != "" {
			b.WriteString("\n" + s.Dim.Render(hint) + "\n")
		}
		b.WriteString("\n" + s.Dim.Render(d.sampleLine()) + "\n")
		b.WriteString(s.Dim.Render("tab moves between fields · enter on the last field reads the "+d.noun()+" and shows the change") + "\n")
	case stepPlanning:
		b.WriteString(planningText(d) + "\n")
	case stepConfirm:
		return d.confirmView(b.String())
	case stepRunning, stepDone:
		t := d.tally()
		pct := 0.0
		if t.writes > 0 {
			pct = float64(t.attempted) / float64(t.writes)
		}
		count := fmt.Sprintf(" %s/%s writes", units.FormatCount(int64(t.attempted)), units.FormatCount(int64(t.writes)))
		d.bar.SetWidth(max(d.Width-ansi.StringWidth(count)-1, 10)) // the count stays on the bar's line
		fmt.Fprintf(&b, "%s%s\n\n", d.bar.ViewAs(pct), count)
		b.WriteString(t.String(d.step == stepDone) + "\n")
		b.WriteString(d.resultNotes())
		switch {
		case d.step == stepDone && d.wroteEntries():
			b.WriteString("\n" + s.Dim.Render("enter closes and re-reads the streams · tab: the Writes screen, this session's writes"))
		case d.step == stepDone:
			b.WriteString("\n" + s.Dim.Render("enter closes and rescans · tab: the Writes screen, this session's writes"))
		default:
			b.WriteString("\n" + s.Dim.Render("esc stops before the next write"))
		}
	}
	if d.errText != "" {
		b.WriteString("\n" + s.Error.Render(d.errText))
	}
	return b.String()
}

// shownKey is a key as the dialog shows it: sanitized, and cut in its
// middle to the width less room, so wrapping never splits it.
func (d *dialog) shownKey(k string, room int) string {
	k = inspect.Sanitize(k)
	return common.FitMiddle(k, min(ansi.StringWidth(k), max(d.Width-room, 12)))
}

// writeTargets are what a write key takes: the marked records still in
// the table, else the one under the cursor; onMarks says the marks.
func (rs *recordsScreen) writeTargets() (recs []inspect.Record, onMarks bool) {
	recs = rs.markedRecords()
	if r := rs.current(); len(recs) == 0 && r != nil {
		recs = []inspect.Record{*r}
	}
	return recs, len(rs.marks) > 0
}

// dropMarks forgets the marks (a write took them, or the source changed).
func (rs *recordsScreen) dropMarks() { rs.marks = nil }

// markedRecords returns the marked records still in the table.
func (rs *recordsScreen) markedRecords() []inspect.Record {
	if len(rs.marks) == 0 {
		return nil
	}
	var out []inspect.Record
	for i := range rs.store.recs.Len() {
		if r := rs.store.recs.Peek(i, &rs.store.peek); rs.marks[r.Key] {
			out = append(out, *rs.store.recs.At(i)) // a copy of its own
		}
	}
	return out
}
