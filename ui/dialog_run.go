package ui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
)

// The dialog's running and done steps: a message per finished write, and
// notes on the writes that did not apply.

// writeMsg reports one finished write of a running bulk action.
type writeMsg struct {
	i int
	r actions.Result
}

// writesDoneMsg ends a bulk run.
type writesDoneMsg struct{}

const uiWriteRate = 20 // writes per second in bulk runs

func waitWrite(ch <-chan writeMsg) tea.Cmd {
	return func() tea.Msg {
		w, ok := <-ch
		if !ok {
			return writesDoneMsg{}
		}
		return w
	}
}

// add records a finished write of the run d shows (nil: closed).
func (ws *writesScreen) add(d *dialog, msg writeMsg) {
	w := WriteRecord{At: ws.Now(), Result: msg.r}
	if d != nil && msg.i < len(d.results) {
		d.results[msg.i] = msg.r
		d.done = msg.i + 1
		w.Entry = d.plans[msg.i].Entry()
	}
	ws.list = append(ws.list, w)
}

// finish ends the run: its writes are all in.
func (d *dialog) finish() {
	d.step = stepDone
	d.cancel()
}

// resultNotes lists the first few planned writes that did not apply, with why.
func (d *dialog) resultNotes() string {
	var notes []string
	for i, r := range d.results[:d.done] {
		switch {
		case len(notes) >= 5 || d.plans[i].Refused != "":
		case r.Unreplicated():
			notes = append(notes, fmt.Sprintf("  not replicated %s: %s", d.shownKey(d.resultKey(i), d.Width/2), inspect.Sanitize(r.Note)))
		case r.Outcome != write.Applied && r.Outcome != write.Skipped:
			notes = append(notes, fmt.Sprintf("  %s %s: %s", r.Outcome, d.shownKey(d.resultKey(i), d.Width/2), inspect.Sanitize(r.Detail)))
		}
	}
	if len(notes) == 0 {
		return ""
	}
	return strings.Join(notes, "\n") + "\n"
}
