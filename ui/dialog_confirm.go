package ui

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

// The dialog's confirm step: the exact change, the typed confirmation,
// and the start of the rate-limited run.

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
