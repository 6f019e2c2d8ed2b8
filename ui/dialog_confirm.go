package ui

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/write"
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

// run checks the typed confirmation and starts the run; the channel
// brings each write's result, nil when the run did not start.
func (d *dialog) run() <-chan writeMsg {
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
	ctx, cancel := context.WithCancel(d.Ctx)
	d.cancel = cancel
	ch := make(chan writeMsg, len(d.plans))
	ex, plans := d.Opts.Executor, d.plans
	go func() {
		defer close(ch)
		ex.ApplyAll(ctx, plans, uiWriteRate, func(i int, r actions.Result) { ch <- writeMsg{i: i, r: r} })
	}()
	return ch
}

// changeLines are a plan's changes, field, before → after, each whole
// (up to 200 characters a value) and wrapped under its value: the plan
// scrolls, so nothing is clipped to keep the confirmation in sight.
func (d *dialog) changeLines(cs []write.Change) string {
	var b strings.Builder
	for _, c := range cs {
		field := fmt.Sprintf("  %-14s ", inspect.Sanitize(c.Field))
		before, after := inspect.Sanitize(c.Before), inspect.Sanitize(c.After)
		b.WriteString(hang(field, units.Clip(before, 200)+" → "+units.Clip(after, 200), d.Width) + "\n")
	}
	return b.String()
}
