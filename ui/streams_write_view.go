package ui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

// The entry writes' texts: the dialog's form hints and preview, the
// Streams screen's help and footer keys.

// entryTitle is the dialog's title on entries: "RETRY 2 pending entries".
func (d *dialog) entryTitle() string {
	noun := "pending entries"
	if len(d.entries) == 1 {
		noun = "pending entry"
	}
	return fmt.Sprintf("%s %s %s", strings.ToUpper(string(d.kind)), count(len(d.entries)), noun)
}

// entryFormHint says what the form's fields mean for kind.
func entryFormHint(kind write.Kind) string {
	switch kind {
	case write.KindRetry:
		return "Mode: claim hands each entry to the consumer To, its delivery count +1 · claim-justid: the count kept · redeliver: the same consumer, idle reset to 0 (To unused)"
	case write.KindDeadLetter:
		return "To: each entry is copied there with idemctl.* fields saying where from, then acknowledged; {stream} is the entry's stream"
	case write.KindAck:
		return "ack acknowledges each entry (XACK): it leaves the pending list, its work known to be done"
	}
	return ""
}

// entrySample is the form's line naming the entries.
func (d *dialog) entrySample() string {
	var ids []string
	for i, t := range d.entries {
		if i == 3 {
			ids = append(ids, "… +"+count(len(d.entries)-3))
			break
		}
		ids = append(ids, d.shownKey(string(t.e.Stream)+" "+t.e.ID, 10))
	}
	return "entries: " + strings.Join(ids, ", ")
}

// entryPlan is the confirm step on entries: one line per entry saying
// what changes (or why it cannot), every one of them (the plan scrolls),
// grouped under its stream and group; and under it, in sight, whether
// the writes can be undone, said before they run.
func (d *dialog) entryPlan() (plan, foot []string) {
	s := d.styles
	head := ""
	for i, p := range d.plans {
		e := d.entries[i].e
		if h := sanitizeText(e.Stream) + " · group " + sanitizeText(e.Group); h != head {
			head = h
			plan = append(plan, s.Title.Render(fitMiddle(h, d.width)))
		}
		plan = append(plan, strings.Split(d.entryPlanLine(e.ID, p), "\n")...)
	}
	for _, p := range d.plans {
		if p.Refused == "" && p.UndoNote != "" {
			foot = append(foot, strings.Split(wrapHang(s.Error.Render("NOT undoable: "), inspect.Sanitize(units.OneLine(p.UndoNote)), d.width), "\n")...)
			break
		}
	}
	if d.kind == write.KindRetry && d.runnable() > 0 {
		foot = append(foot, s.Dim.Render(fit("undoable: u on the Writes screen hands an entry back as it was", d.width)))
	}
	return plan, foot
}

// entryPlanLine is one entry's change, or why it cannot be written,
// wrapped under its ID.
func (d *dialog) entryPlanLine(id string, p *actions.Plan) string {
	prefix := "  " + inspect.Sanitize(id) + "  "
	if p.Refused != "" {
		return wrapHang(prefix, d.styles.Error.Render(string(p.Outcome))+": "+inspect.Sanitize(units.OneLine(p.Refused)), d.width)
	}
	parts := make([]string, 0, len(p.Changes))
	for _, c := range p.Changes {
		parts = append(parts, changeText(c))
	}
	return wrapHang(prefix, strings.Join(parts, " · "), d.width)
}

// changeText is one change of an entry in words: "consumer c1 → x",
// "idle 10m00s → 0s", "pending to "c1" → acknowledged (XACK)".
func changeText(c write.Change) string {
	f, before, after := inspect.Sanitize(c.Field), inspect.Sanitize(c.Before), inspect.Sanitize(c.After)
	switch {
	case strings.HasPrefix(f, "(") && before == "(none)":
		return after
	case strings.HasPrefix(f, "(") && f != "(idle)":
		return before + " → " + after
	}
	return strings.Trim(f, "()") + " " + before + " → " + after
}

// relabel is b with another description, on only while on holds.
func relabel(b key.Binding, desc string, on bool) key.Binding {
	r := key.NewBinding(key.WithKeys(b.Keys()...), key.WithHelp(b.Help().Key, desc))
	r.SetEnabled(on && b.Enabled())
	return r
}

// writeHelp are the footer's write keys on the Streams screen: on,
// or said off with why; none on the groups with nothing marked (they
// act on marks there).
func (st *streamsScreen) writeHelp() []keyBinding {
	k := st.keys
	if st == nil || st.level == levelGroups && len(st.marks) == 0 {
		return nil
	}
	if !st.canWrite() {
		return []keyBinding{writesOff(st.offNote(true), k.Retry, k.Ack, k.DeadLetter, relabel(k.Mark, "", false))}
	}
	mark := relabel(k.Mark, "mark", true)
	if st.level == levelEntry {
		return []keyBinding{k.Retry, k.Ack, k.DeadLetter, mark}
	}
	return []keyBinding{mark, k.Retry, k.Ack, k.DeadLetter}
}
