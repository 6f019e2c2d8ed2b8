package ui

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/progress"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
	"github.com/idemctl/idemctl/verify"
)

// The write dialog walks: profile name (protected profiles, once) → form →
// planning (reads each record) → confirm (diff; type the count for several)
// → running (rate-limited, cancellable) → done (per-key summary).
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
	kind     actions.Kind
	targets  []inspect.Record // copies: what the operator saw
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
}

// planMsg carries the plans read for the dialog.
type planMsg struct {
	plans []*actions.Plan
	err   error
}

// writeMsg reports one finished write of a running bulk action.
type writeMsg struct {
	i int
	r actions.Result
}

// writesDoneMsg ends a bulk run.
type writesDoneMsg struct{}

// WriteRecord is one write of this session, for the writes screen.
type WriteRecord struct {
	At     time.Time
	Result actions.Result
}

const uiWriteRate = 20 // writes per second in bulk runs

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

// readOnlyHint is all a write key does in a read-only session, and what
// the help says under the disabled write keys: one line at 80 columns.
const readOnlyHint = "read-only: writes are off (start with --write, or writes: true in the profile)"

// snapshotHint is what a write key does on a snapshot.
const snapshotHint = "a snapshot: nothing to write to — Y copies the marked rows as --from-file lines pinned to the file, for a guarded write on the live server"

func (m *Model) readOnlyHint() string {
	if m.opts.Scan.Snapshot != nil {
		return snapshotHint
	}
	return readOnlyHint
}

// writesOffNote is readOnlyHint as the footer says it, beside the write
// keys it names.
func (m *Model) writesOffNote() string {
	if m.opts.Scan.Snapshot != nil {
		return "off: a snapshot (Y copies)"
	}
	return "off: start with --write"
}

// openDialog starts a write on the marked records, or the one under the cursor.
func (m *Model) openDialog(kind actions.Kind) tea.Cmd {
	if !m.canWrite() {
		m.status = m.readOnlyHint()
		return nil
	}
	targets := m.markedRecords()
	if len(targets) == 0 {
		r := m.store.at(m.cursor)
		if r == nil {
			return nil
		}
		targets = []inspect.Record{*r}
	}
	cmd := m.openDialogOn(kind, targets)
	if m.dialog != nil {
		m.dialog.onMarks = len(m.marks) > 0
	}
	return cmd
}

// openDialogOn starts a write on the given records (the detail screen's
// record, or the marked ones).
func (m *Model) openDialogOn(kind actions.Kind, targets []inspect.Record) tea.Cmd {
	if !m.canWrite() {
		m.status = m.readOnlyHint()
		return nil
	}
	w := max(m.width-20, 20)
	d := &dialog{kind: kind, targets: targets, step: stepForm, needsRef: needsRef(kind, targets)}
	// The TTL field starts at the action's default, shown as its name.
	ttlDefault := string(actions.TTLRetention)
	switch kind {
	case actions.KindExpire:
		d.labels = []string{"TTL", "Reason"}
		// Ten minutes, not 0: a slip of enter must not delete; 0 is typed on purpose.
		d.inputs = []textinput.Model{newInput("a duration, e.g. 10m; 0 deletes now", expireDefault, w), newInput("why (required)", "", w)}
	case actions.KindFail:
		d.labels = []string{"Reason", "TTL"}
		d.inputs = []textinput.Model{newInput("why (required)", "", w), newInput("retention, keep, or a duration", ttlDefault, w)}
	case actions.KindUndo:
		d.labels = []string{"Reason"}
		d.inputs = []textinput.Model{newInput("why (required)", "", w)}
	case actions.KindReconcile:
		ref := "optional: reference in the source of truth (e.g. order id)"
		if d.needsRef {
			ref = "reference in the source of truth, e.g. order id (required)"
		}
		d.labels = []string{"Ref", "Reason", "TTL"}
		d.inputs = []textinput.Model{newInput(ref, "", w),
			newInput("why (required)", "", w), newInput("retention, keep, or a duration", ttlDefault, w)}
	}
	d.confirm = newInput("", "", 12)
	d.bar = progress.New(progress.WithWidth(max(m.width-10, 10)), progress.WithoutPercentage())
	if m.opts.Executor.Policy.NeedsProfileName() {
		d.step = stepProfile
		d.confirm.Placeholder = m.opts.Profile
	}
	m.dialog = d
	if kind == kindTriage && d.step == stepForm {
		return m.askHooks() // no form: the hooks give ref, status and response
	}
	return m.focusDialog()
}

func (m *Model) focusDialog() tea.Cmd {
	d := m.dialog
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

func (m *Model) onDialogKey(msg tea.KeyPressMsg) tea.Cmd {
	d := m.dialog
	key := msg.String()
	if key == "esc" {
		switch d.step {
		case stepRunning:
			d.cancel() // stops before the next write; the report says what was done
			return nil
		default:
			if d.cancel != nil {
				d.cancel() // hooks still asking (V)
			}
			m.dialog = nil
			return nil
		}
	}
	switch d.step {
	case stepProfile:
		if key == "enter" {
			if err := m.opts.Executor.Policy.ConfirmProfile(strings.TrimSpace(d.confirm.Value())); err != nil {
				d.errText = err.Error()
				return nil
			}
			d.errText, d.step = "", stepForm
			d.confirm.SetValue("")
			if d.kind == kindTriage {
				return m.askHooks()
			}
			return m.focusDialog()
		}
	case stepForm:
		switch key {
		case "tab", "down":
			d.focus = (d.focus + 1) % len(d.inputs)
			return m.focusDialog()
		case "shift+tab", "up":
			d.focus = (d.focus + len(d.inputs) - 1) % len(d.inputs)
			return m.focusDialog()
		case "enter":
			if d.focus < len(d.inputs)-1 {
				d.focus++
				return m.focusDialog()
			}
			return m.submitForm()
		}
	case stepConfirm:
		if key == "enter" {
			return m.confirmDialog()
		}
	case stepDone:
		if key == "enter" || key == "q" || key == "tab" {
			if d.onMarks {
				m.marks = nil // written: a second write would need them marked again
			}
			m.dialog = nil
			if key == "tab" { // straight to what was written, as the dialog says
				m.screen, m.scroll, m.writeSel = screenWrites, 0, 0
			}
			if m.screen == screenDetail && m.detail != nil {
				// Opened from the detail screen: show the record as written.
				return tea.Batch(m.startScan(), m.fetchDetail(m.detail.ks, m.detail.key))
			}
			return m.startScan() // show the outcome in the table
		}
		return nil
	default:
		return nil
	}
	var cmd tea.Cmd
	if d.step == stepForm {
		d.inputs[d.focus], cmd = d.inputs[d.focus].Update(msg)
	} else {
		d.confirm, cmd = d.confirm.Update(msg)
	}
	return cmd
}

// submitForm validates the form and plans every target in the background.
func (m *Model) submitForm() tea.Cmd {
	d := m.dialog
	reason := d.value("Reason")
	if reason == "" {
		d.errText = "a reason is required for every write"
		return nil
	}
	ttlText := d.value("TTL")
	if ttlText == string(actions.TTLRetention) {
		ttlText = "" // the field's initial value: the action's default, as with the CLI's unset --ttl
	}
	ttl, err := actions.ParseTTL(d.kind, ttlText)
	if err != nil {
		d.errText = "TTL: " + err.Error()
		return nil
	}
	ref := d.value("Ref")
	if d.needsRef && ref == "" {
		d.errText = "a reference from the authoritative system is required: this schema records it"
		return nil
	}
	d.errText, d.step = "", stepPlanning
	ex, ctx, targets, kind := m.opts.Executor, m.ctx, d.targets, d.kind
	if kind == actions.KindUndo {
		return m.planUndo(reason)
	}
	return func() tea.Msg {
		plans := make([]*actions.Plan, 0, len(targets))
		for _, r := range targets {
			req := actions.Request{Kind: kind, Keyspace: r.Keyspace, Key: r.Key, Reason: reason, TTL: ttl, Ref: ref,
				Saw: &actions.Seen{State: r.RawState, Fingerprint: r.Fingerprint}}
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			p, err := ex.Plan(pctx, req)
			cancel()
			if err != nil {
				return planMsg{err: err}
			}
			plans = append(plans, p)
		}
		return planMsg{plans: plans}
	}
}

// needsRef reports whether any target's schema records a reference: the
// form then asks for one, as the CLI asks for --ref.
func needsRef(kind actions.Kind, targets []inspect.Record) bool {
	for i := range targets {
		if actions.NeedsRef(kind, targets[i].Keyspace) {
			return true
		}
	}
	return false
}

func (m *Model) onPlans(msg planMsg) {
	d := m.dialog
	if d == nil || d.step != stepPlanning {
		return
	}
	if msg.err != nil {
		d.step, d.errText = stepForm, "could not read the records: "+inspect.Sanitize(msg.err.Error())
		return
	}
	d.plans, d.step = msg.plans, stepConfirm
	m.focusDialog()
}

func (d *dialog) runnable() int {
	n := 0
	for _, p := range d.plans {
		if p.Refused == "" {
			n++
		}
	}
	return n
}

// confirmWord is what the operator types to apply n writes, as at the
// CLI's prompt: yes for one, the count for several.
func confirmWord(n int) string {
	if n == 1 {
		return "yes"
	}
	return strconv.Itoa(n)
}

// confirmDialog checks the typed confirmation and starts the run.
func (m *Model) confirmDialog() tea.Cmd {
	d := m.dialog
	n := d.runnable()
	want := confirmWord(n)
	if got := strings.TrimSpace(d.confirm.Value()); n == 0 || got != want {
		if n == 0 {
			d.errText = "nothing can be written: see the reasons above (esc closes)"
		} else {
			d.errText = fmt.Sprintf("type %s to confirm", want)
		}
		return nil
	}
	d.step, d.errText = stepRunning, ""
	d.results = make([]actions.Result, len(d.plans))
	ctx, cancel := context.WithCancel(m.ctx)
	d.cancel = cancel
	ch := make(chan writeMsg, len(d.plans))
	ex, plans := m.opts.Executor, d.plans
	go func() {
		defer close(ch)
		ex.ApplyAll(ctx, plans, uiWriteRate, func(i int, r actions.Result) { ch <- writeMsg{i: i, r: r} })
	}()
	m.writeCh = ch
	return waitWrite(ch)
}

func waitWrite(ch <-chan writeMsg) tea.Cmd {
	return func() tea.Msg {
		w, ok := <-ch
		if !ok {
			return writesDoneMsg{}
		}
		return w
	}
}

func (m *Model) onWrite(msg writeMsg) tea.Cmd {
	d := m.dialog
	if d != nil && msg.i < len(d.results) {
		d.results[msg.i] = msg.r
		d.done = msg.i + 1
	}
	m.writes = append(m.writes, WriteRecord{At: m.now(), Result: msg.r})
	return waitWrite(m.writeCh)
}

func (m *Model) onWritesDone() {
	if m.dialog != nil {
		m.dialog.step = stepDone
		m.dialog.cancel()
	}
}

// dialogView renders the dialog in place of the screen body.
func (m *Model) dialogView() string {
	d := m.dialog
	s := m.styles
	var b strings.Builder
	title := fmt.Sprintf("%s %s record(s)", strings.ToUpper(string(d.kind)), count(len(d.targets)))
	b.WriteString(s.Title.Render(title) + s.Dim.Render("  (esc cancels)") + "\n\n")
	switch d.step {
	case stepProfile:
		fmt.Fprintf(&b, "Profile %q is protected. Type its name to allow writes for this session:\n\n  %s\n", m.opts.Profile, d.confirm.View())
	case stepForm:
		for i, l := range d.labels {
			marker := "  "
			if i == d.focus {
				marker = "> "
			}
			fmt.Fprintf(&b, "%s%-7s %s\n", marker, l, d.inputs[i].View())
		}
		if d.kind == actions.KindExpire {
			b.WriteString("\n" + s.Dim.Render("TTL: the record expires after it (10m: in ten minutes); 0 deletes it now") + "\n")
		}
		b.WriteString("\n" + s.Dim.Render(m.sampleLine()) + "\n")
		b.WriteString(s.Dim.Render("tab moves between fields · enter on the last field reads the records and shows the change") + "\n")
	case stepPlanning:
		b.WriteString(planningText(d) + "\n")
	case stepConfirm:
		if d.triage != nil {
			m.triageList(&b)
		} else {
			m.writeDiff(&b)
		}
		n := d.runnable()
		switch {
		case n == 0:
			b.WriteString("\nnothing can be written.\n")
		case n == 1:
			fmt.Fprintf(&b, "\nThe write checks the record is still exactly as read. Type yes and enter to apply: %s\n", d.confirm.View())
		default:
			fmt.Fprintf(&b, "\n%s writes, at most %d per second, each compare-and-set. Type %d and enter to apply: %s\n", units.FormatCount(int64(n)), uiWriteRate, n, d.confirm.View())
		}
	case stepRunning, stepDone:
		t := d.tally()
		pct := 0.0
		if t.writes > 0 {
			pct = float64(t.attempted) / float64(t.writes)
		}
		count := fmt.Sprintf(" %s/%s writes", units.FormatCount(int64(t.attempted)), units.FormatCount(int64(t.writes)))
		d.bar.SetWidth(max(m.width-ansi.StringWidth(count)-1, 10)) // the count stays on the bar's line
		fmt.Fprintf(&b, "%s%s\n\n", d.bar.ViewAs(pct), count)
		b.WriteString(t.String(d.step == stepDone) + "\n")
		b.WriteString(m.resultNotes(d))
		if d.step == stepDone {
			b.WriteString("\n" + s.Dim.Render("enter closes and rescans · tab: the Writes screen, this session's writes"))
		} else {
			b.WriteString("\n" + s.Dim.Render("esc stops before the next write"))
		}
	}
	if d.errText != "" {
		b.WriteString("\n" + s.Error.Render(d.errText))
	}
	return b.String()
}

func (m *Model) sampleLine() string {
	d := m.dialog
	var keys []string
	for i, r := range d.targets {
		if i == 3 {
			keys = append(keys, "… +"+count(len(d.targets)-3))
			break
		}
		keys = append(keys, m.dialogKey(displayKey(&r), 10))
	}
	return "records: " + strings.Join(keys, ", ")
}

// dialogKey is a key as the dialog shows it: sanitized, and cut in its
// middle to the width less room, so wrapping never splits it.
func (m *Model) dialogKey(k string, room int) string {
	k = inspect.Sanitize(k)
	return fitMiddle(k, min(ansi.StringWidth(k), max(m.width-room, 12)))
}

// changeLines are a plan's changes, field, before → after, each whole and
// wrapped when the dialog has the room; else one line each, clipped, so
// the confirmation under them stays on screen.
func (m *Model) changeLines(cs []actions.Change, room int) string {
	var wrapped, clipped strings.Builder
	for _, c := range cs {
		field := fmt.Sprintf("  %-14s ", inspect.Sanitize(c.Field))
		before, after := inspect.Sanitize(c.Before), inspect.Sanitize(c.After)
		wrapped.WriteString(hang(field, units.Clip(before, 200)+" → "+units.Clip(after, 200), m.width) + "\n")
		clipped.WriteString(fit(field+units.Clip(before, 30)+" → "+units.Clip(after, 40), m.width) + "\n")
	}
	if strings.Count(wrapped.String(), "\n") <= room {
		return wrapped.String()
	}
	return clipped.String()
}

// writeDiff shows the exact change: all of it for one record; for many,
// the first record's change in full, a sample of the others, and refusals.
func (m *Model) writeDiff(b *strings.Builder) {
	d := m.dialog
	var ok, refused []*actions.Plan
	for _, p := range d.plans {
		if p.Refused != "" {
			refused = append(refused, p)
		} else {
			ok = append(ok, p)
		}
	}
	if len(ok) > 0 {
		p := ok[0]
		if len(ok) > 1 {
			fmt.Fprintf(b, "e.g. %s\n", m.dialogKey(p.Key, 5))
		} else {
			fmt.Fprintf(b, "%s\n", m.dialogKey(p.Key, 0))
		}
		room := m.bodyHeight() - 7 // the title, the key and the confirmation
		if len(ok) > 1 {
			room -= 6 // and the sample of the others
		}
		changes := m.changeLines(p.Changes, room)
		b.WriteString(changes)
		if p.UndoNote != "" {
			// said before it runs, as the CLI's plan says it; whole where
			// there is room, else one line: the confirmation must show
			label, note := m.styles.Error.Render("will not be undoable: "), inspect.Sanitize(units.OneLine(p.UndoNote))
			line := hang(label, note, m.width)
			if strings.Count(changes, "\n")+strings.Count(line, "\n")+1 > room {
				line = fit(label+note, m.width)
			}
			b.WriteString(line + "\n")
		}
		if len(ok) > 1 {
			var sample []string
			for _, q := range ok[1:min(len(ok), 6)] {
				sample = append(sample, m.dialogKey(displayKey(&inspect.Record{Key: q.Key, Keyspace: q.Keyspace, Groups: []string{}}), 10))
			}
			more := ""
			if len(ok) > 6 {
				more = " … +" + count(len(ok)-6)
			}
			fmt.Fprintf(b, "and the same change on %s more: %s%s\n", count(len(ok)-1), strings.Join(sample, ", "), more)
		}
	}
	for i, p := range refused {
		if i == 3 {
			fmt.Fprintf(b, "… %s more not writable\n", count(len(refused)-3))
			break
		}
		fmt.Fprintf(b, "%s %s: %s\n", m.styles.Error.Render(string(p.Outcome)), m.dialogKey(p.Key, m.width/2), inspect.Sanitize(p.Refused))
	}
}

// runTally accounts for every target of a bulk write so the numbers add up
// to the preview's: the writes it planned (applied, not applied by cause,
// not attempted) plus the records it already said were not writable.
type runTally struct {
	records, writes, attempted, applied int
	byCause                             []actions.Tally // attempted planned writes that did not apply, by cause (writeCauses' index)
	notReplicated                       int             // applied, but the replicas did not acknowledge them in time
	notAttempted                        int             // planned writes a cancel stopped (or still to go)
	stopped                             bool            // the run stopped itself (the audit log failed): not a cancel
	refused                             actions.Tally   // not writable at the preview, by outcome
}

// A writeCause is why attempted writes did not apply, as the run's
// summary names it: one line per distinct cause (one clause when there is
// one), so a count never borrows another cause's words. A result's cause
// is the first row that matches it; one that none matches is counted by
// its outcome alone, and the notes under the summary give its detail. A
// new cause (a write the replicas did not acknowledge) is one more row.
type writeCause struct {
	why string
	is  func(actions.Result) bool
}

var writeCauses = []writeCause{
	{"the record changed since the preview", outcomeIs(actions.Conflict, actions.NotFound)},
	{"NOPERM: the server's ACL does not let this Redis user write", refusedWith(aclRefusal)},
	{"refused by policy", refusedWith(policyRefusal)},
	{"the audit log could not be written", refusedWith(func(d string) bool { return strings.HasPrefix(d, "not written: ") })},
	{"the record's version could not be read, so the write could not be guarded",
		refusedWith(func(d string) bool { return strings.HasPrefix(d, "the record's version could not be read") })},
	{"a server error", outcomeIs(actions.Failed)},
	{"uncertain, and a re-read shows it did not happen", outcomeIs(actions.NotApplied)},
	{"uncertain: check the record by hand", outcomeIs(actions.Unknown)},
}

func outcomeIs(outs ...actions.Outcome) func(actions.Result) bool {
	return func(r actions.Result) bool { return slices.Contains(outs, r.Outcome) }
}

// refusedWith matches a write refused (nothing written) for the reason
// its detail gives.
func refusedWith(detail func(string) bool) func(actions.Result) bool {
	return func(r actions.Result) bool { return r.Outcome == actions.Refused && detail(r.Detail) }
}

// aclRefusal recognises the server's ACL in a refusal, as the executor
// words it (actions' explain): NOPERM for a command or key the user may
// not use, or a script's call refused on the user's behalf (Redis, then
// Valkey 8). The detail may lead with why the write stopped ("the
// record's version could not be read…: NOPERM …").
func aclRefusal(d string) bool {
	return strings.Contains(d, "NOPERM") || strings.Contains(d, "The user executing the script can't run this command") ||
		strings.Contains(d, "ACL failure in script")
}

// policyRefusal recognises the session's write policy in a refusal.
func policyRefusal(d string) bool {
	return d == actions.ErrReadOnly.Error() || d == actions.ErrNeedsProfileName.Error() ||
		strings.HasPrefix(d, "no audit log: ")
}

// causeOf is the index in writeCauses of why r did not apply;
// len(writeCauses) when no row matches.
func causeOf(r actions.Result) int {
	for i, c := range writeCauses {
		if c.is(r) {
			return i
		}
	}
	return len(writeCauses)
}

func (d *dialog) tally() runTally {
	t := runTally{records: len(d.plans), byCause: make([]actions.Tally, len(writeCauses)+1), refused: actions.Tally{}}
	for i, p := range d.plans {
		if p.Refused != "" {
			t.refused[p.Outcome]++
			continue
		}
		t.writes++
		r := d.results[i]
		switch {
		case i >= d.done || r.Outcome == actions.Skipped:
			t.notAttempted++
			t.stopped = t.stopped || strings.HasPrefix(r.Detail, "not written: the run stopped")
		case r.Outcome == actions.Applied:
			t.attempted++
			t.applied++
			if r.Unreplicated() {
				t.notReplicated++
			}
		default:
			t.attempted++
			c := causeOf(r)
			if t.byCause[c] == nil {
				t.byCause[c] = actions.Tally{}
			}
			t.byCause[c][r.Outcome]++
		}
	}
	return t
}

// String says what happened to each planned write and why a count moved
// from the preview's; done says whether the run is over. The writes that
// did not apply are counted with their cause: in the first line when they
// share one, else a line per cause under it.
func (t runTally) String(done bool) string {
	var causes []string
	for i, n := range t.byCause {
		s := n.String()
		switch {
		case s == "":
			continue
		case i < len(writeCauses):
			s += " (" + writeCauses[i].why + ")"
		}
		causes = append(causes, s)
	}
	applied := units.FormatCount(int64(t.applied)) + " applied"
	if t.notReplicated > 0 {
		applied += " (" + units.FormatCount(int64(t.notReplicated)) + " NOT REPLICATED: a failover now could take them back)"
	}
	parts := []string{applied}
	switch len(causes) {
	case 0:
	case 1:
		parts = append(parts, causes[0])
	default:
		parts = append(parts, units.FormatCount(int64(t.attempted-t.applied))+" did not apply")
	}
	if t.notAttempted > 0 {
		why := "still to go"
		switch {
		case done && t.stopped:
			why = "not attempted: the run stopped (the audit log could not be written)"
		case done:
			why = "not attempted: cancelled"
		}
		parts = append(parts, units.FormatCount(int64(t.notAttempted))+" "+why)
	}
	out := fmt.Sprintf("%s of %s planned writes: %s", units.FormatCount(int64(t.attempted)), units.FormatCount(int64(t.writes)), strings.Join(parts, " · "))
	if len(causes) > 1 {
		out += "\n  · " + strings.Join(causes, "\n  · ")
	}
	if s := t.refused.String(); s != "" {
		out += fmt.Sprintf("\n%s not writable, as the preview said (%s)", units.FormatCount(int64(t.records-t.writes)), s)
	}
	return out
}

// resultNotes lists the first few planned writes that did not apply, with why.
func (m *Model) resultNotes(d *dialog) string {
	var notes []string
	for i, r := range d.results[:d.done] {
		switch {
		case len(notes) >= 5 || d.plans[i].Refused != "":
		case r.Unreplicated():
			notes = append(notes, fmt.Sprintf("  not replicated %s: %s", m.dialogKey(r.Key, m.width/2), inspect.Sanitize(r.Note)))
		case r.Outcome != actions.Applied && r.Outcome != actions.Skipped:
			notes = append(notes, fmt.Sprintf("  %s %s: %s", r.Outcome, m.dialogKey(r.Key, m.width/2), inspect.Sanitize(r.Detail)))
		}
	}
	if len(notes) == 0 {
		return ""
	}
	return strings.Join(notes, "\n") + "\n"
}

// writesView lists this session's writes, newest first.
func (m *Model) writesView() string {
	s := m.styles
	var b strings.Builder
	b.WriteString(s.Title.Render("WRITES THIS SESSION"))
	if !m.canWrite() {
		b.WriteString("\n\n" + ansi.Wrap(s.Dim.Render(m.readOnlyHint()), m.width, " "))
		return b.String()
	}
	// The path is shortened in its middle: its file name stays in view.
	const label = "  audit log: "
	room := max(m.width-ansi.StringWidth("WRITES THIS SESSION"+label), 12)
	b.WriteString(s.Dim.Render(label + strings.TrimRight(fitMiddle(m.opts.Executor.Audit.Path(), room), " ")))
	if len(m.writes) == 0 {
		b.WriteString("\n\n" + ansi.Wrap(s.Dim.Render("none yet. Mark records with space (a: all in view), then E expire · F force-fail · R reconcile."), m.width, " "))
		return b.String()
	}
	b.WriteString("\n" + s.Dim.Render(m.writesSummary()+" · u undoes ▸"))
	lines, _ := m.writeLines()
	for _, l := range lines {
		b.WriteString("\n" + l)
	}
	if m.followSel {
		// a key moved the selection: keep it on screen, it is what u
		// undoes; it sits under the title and the summary, and the last
		// line may say more follows
		m.followSel = false
		at, h := 2+m.writeSel, m.bodyHeight()
		m.scroll = min(max(m.scroll, at-h+2), m.writeSel)
	}
	return b.String()
}

// writesSummary counts this session's writes by outcome.
func (m *Model) writesSummary() string {
	rs := make([]actions.Result, len(m.writes))
	for i, w := range m.writes {
		rs[i] = w.Result
	}
	return units.FormatCount(int64(len(rs))) + " results: " + actions.Summary(rs).String()
}

// writeLines are the writes newest first, one line each, cut to the width
// with the key shortened in its middle. A run of results that were never
// attempted (a cancelled bulk write) is one line, so it cannot bury the
// writes that were made.
// The line m.writeSel (what u undoes) is marked after its time; idx holds
// each line's write (the newest of a folded run).
func (m *Model) writeLines() (out []string, idx []int) {
	for i := len(m.writes) - 1; i >= 0; i-- {
		w := m.writes[i]
		idx = append(idx, i)
		mark := " "
		if len(out) == m.writeSel {
			mark = "▸"
		}
		outcome := string(w.Result.Outcome)
		if w.Result.Unreplicated() {
			outcome = "NOT REPL." // applied on the primary only: a failover could take it back
		}
		head := fmt.Sprintf("%s%s%-9s %-11s ", w.At.Format("15:04:05"), mark, w.Result.Action, outcome)
		if w.Result.Outcome == actions.Skipped {
			j := i
			for j > 0 && m.writes[j-1].Result.Outcome == actions.Skipped && m.writes[j-1].Result.Action == w.Result.Action {
				j--
			}
			if n := i - j + 1; n > 1 {
				out = append(out, fit(head+units.FormatCount(int64(n))+" records — "+inspect.Sanitize(w.Result.Detail), m.width))
				i = j
				continue
			}
		}
		rest := m.width - ansi.StringWidth(head)
		k := inspect.Sanitize(m.withoutPrefix(w.Result.Key))
		detail := ""
		if w.Result.Detail != "" {
			detail = "  — " + inspect.Sanitize(units.OneLine(w.Result.Detail))
		}
		kw := ansi.StringWidth(k)
		if kw+ansi.StringWidth(detail) > rest {
			kw = min(kw, max(rest, 8))
			if detail != "" {
				kw = min(kw, max(rest*3/5, 8)) // the key's tail, then as much of why as fits
			}
		}
		out = append(out, fit(head+fitMiddle(k, kw)+detail, m.width))
	}
	return out, idx
}

// withoutPrefix drops the constant prefix of the keyspace a key belongs to,
// as the table does; the header names the keyspaces.
func (m *Model) withoutPrefix(k string) string {
	for _, ks := range m.opts.Keyspaces {
		if p := ks.Template.Prefix(); p != "" && strings.HasPrefix(k, p) && len(m.opts.Keyspaces) == 1 {
			return strings.TrimPrefix(k, p)
		}
	}
	return k
}

// markedRecords returns the marked records still in the table.
func (m *Model) markedRecords() []inspect.Record {
	if len(m.marks) == 0 {
		return nil
	}
	var out []inspect.Record
	for i := range m.store.recs.Len() {
		if r := m.store.recs.Peek(i, &m.store.peek); m.marks[r.Key] {
			out = append(out, *m.store.recs.At(i)) // a copy of its own
		}
	}
	return out
}
