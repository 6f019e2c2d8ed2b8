package ui

import (
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
	"github.com/idemctl/idemctl/ui/common"
)

// The confirm step's layout: the title, then the plan — every line of it,
// one per target at least: a record's change, each verdict and why, each
// entry — scrolled with j/k, pgdn/pgup, g/G and the wheel, then the foot
// (counts, what cannot be undone, the typed confirmation and its error),
// always in sight. A plan taller than its room ends in a line saying how
// many lines follow and which keys reach them, so no line of a plan is
// out of reach before its count is typed.

// planText is the plan drawn at one width and background: a bulk write's
// plan of a hundred thousand records is drawn once, not on every frame.
type planText struct {
	width           int
	dark            bool
	of              []*actions.Plan // the plans drawn
	top, plan, foot []string
}

// planLines are the confirm step's plan, the lines over it that stay in
// sight (the columns' titles), and the notes under it.
func (d *dialog) planLines() (top, plan, foot []string) {
	if c := d.drawn; c != nil && c.width == d.Width && c.dark == d.Dark && sameSlice(c.of, d.plans) {
		return c.top, c.plan, c.foot
	}
	switch {
	case d.entries != nil:
		plan, foot = d.entryPlan()
	case d.triage != nil:
		top, plan, foot = d.triageList()
	default:
		plan = d.writePlan()
	}
	d.drawn = &planText{width: d.Width, dark: d.Dark, of: d.plans, top: top, plan: plan, foot: foot}
	return top, plan, foot
}

// sameSlice reports whether a and b are one slice: the plans a dialog was
// handed, not new ones.
func sameSlice(a, b []*actions.Plan) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// confirmView is the confirm step's body under head (the title).
func (d *dialog) confirmView(head string) string {
	top, plan, notes := d.planLines()
	foot := append(slices.Clip(notes), d.confirmPrompt()...)
	if d.errText != "" {
		foot = append(foot, wrapLines(d.Styles.Error.Render(d.errText), d.Width)...)
	}
	headLines := append(strings.Split(strings.TrimSuffix(head, "\n"), "\n"), top...)
	room := max(d.h-len(headLines)-len(foot), 1)
	d.page = room
	return strings.Join(append(append(headLines, d.planWindow(plan, room)...), foot...), "\n")
}

// planWindow is the plan's lines from the dialog's scroll, room of them,
// the last saying how many follow when more do.
func (d *dialog) planWindow(plan []string, room int) []string {
	d.scroll = min(max(d.scroll, 0), max(len(plan)-room, 0))
	shown := plan[d.scroll:]
	switch {
	case len(shown) > room && room > 1:
		n := len(shown) - room + 1
		more := fmt.Sprintf("↓ %s more lines of the plan · j/↓ pgdn scroll · G the end", common.Count(n))
		shown = append(shown[:room-1:room-1], d.Styles.Dim.Render(common.Fit(more, d.Width)))
	case len(shown) > room: // a terminal too short for the line that says more
		shown = shown[:room]
	}
	return shown
}

// onPlanKey scrolls the plan; ok is false for a key that is not a move
// (it goes to the confirmation's input).
func (d *dialog) onPlanKey(msg tea.KeyPressMsg) bool {
	dl, ok := d.Keys.Moves(msg, max(d.page-1, 1))
	if ok {
		d.scroll = common.ClampAdd(d.scroll, dl) // and to the plan when drawn
	}
	return ok
}

// wrapLines is s wrapped to width at spaces, as lines.
func wrapLines(s string, width int) []string {
	return strings.Split(ansi.Wrap(s, width, " "), "\n")
}

// confirmPrompt says what applying does and asks for the confirmation.
func (d *dialog) confirmPrompt() []string {
	what := "record is still exactly as read"
	if d.entries != nil {
		what = "entry is still pending as shown"
	}
	var s string
	switch n := d.runnable(); {
	case n == 0:
		s = "nothing can be written."
	case n == 1:
		s = fmt.Sprintf("The write checks the %s. Type yes and enter to apply: %s", what, d.confirm.View())
	default:
		s = fmt.Sprintf("%s writes, at most %d per second, each compare-and-set. Type %d and enter to apply: %s", common.Count(n), uiWriteRate, n, d.confirm.View())
	}
	return append([]string{""}, wrapLines(s, d.Width)...)
}

// writePlan is a record write's plan, every line of it: the first
// record's change in full and whether it can be undone, every other
// record the same change goes to, and each record that cannot be written,
// with why.
func (d *dialog) writePlan() []string {
	var ok, refused []*actions.Plan
	for _, p := range d.plans {
		if p.Refused != "" {
			refused = append(refused, p)
		} else {
			ok = append(ok, p)
		}
	}
	var out []string
	add := func(s string) { out = append(out, strings.Split(strings.TrimSuffix(s, "\n"), "\n")...) }
	if len(ok) > 0 {
		p := ok[0]
		if len(ok) > 1 {
			add("e.g. " + d.shownKey(p.Key, 5))
		} else {
			add(d.shownKey(p.Key, 0))
		}
		add(d.changeLines(p.Changes))
		if p.UndoNote != "" { // said before it runs, as the CLI's plan says it
			add(hang(d.Styles.Error.Render("will not be undoable: "), inspect.Sanitize(units.OneLine(p.UndoNote)), d.Width))
		}
		if len(ok) > 1 {
			add(fmt.Sprintf("and the same change on %s more:", common.Count(len(ok)-1)))
			for _, q := range ok[1:] {
				add("  " + d.shownKey(displayKey(&inspect.Record{Key: q.Key, Keyspace: q.Keyspace, Groups: []string{}}), 2))
			}
		}
	}
	if len(refused) > 0 {
		add(fmt.Sprintf("not writable (%s):", common.Count(len(refused))))
	}
	for _, p := range refused {
		head := "  " + d.Styles.Error.Render(string(p.Outcome)) + " " + d.shownKey(p.Key, d.Width/2) + ":"
		add(hang(head+" ", inspect.Sanitize(p.Refused), d.Width))
	}
	return out
}
