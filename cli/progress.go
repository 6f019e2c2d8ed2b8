package cli

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

// progressLine is the one line a long command keeps up to date on stderr
// while it works, when stderr is a terminal and --quiet is not given: the
// share done, records, rate and the time left. It is never part of the
// output proper, and it is wiped before anything else is written.
type progressLine struct {
	w     io.Writer
	label string
	mu    sync.Mutex
	last  time.Time
	shown bool
}

// progressEvery keeps the line readable and the terminal cheap.
const progressEvery = 200 * time.Millisecond

// newProgress is the progress line of label, or nil (which does nothing)
// when stderr is not a terminal or the user asked for quiet.
func (a *app) newProgress(label string, quiet bool) *progressLine {
	if quiet || !a.errTTY {
		return nil
	}
	return &progressLine{w: a.stderr, label: label}
}

// update redraws the line, at most every progressEvery.
func (p *progressLine) update(pr inspect.Progress) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Since(p.last) < progressEvery {
		return
	}
	p.last = time.Now()
	fmt.Fprintf(p.w, "\r\x1b[K%s", progressText(p.label, pr))
	p.shown = true
}

// clear wipes the line so that other output starts on a clean one; the
// next update draws it again.
func (p *progressLine) clear() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
}

// progressText is "stats  42% · 120,311 records · 98,210/s · 6s left".
func progressText(label string, pr inspect.Progress) string {
	s := fmt.Sprintf("%s %3.0f%% · %s records · %s/s", label, pr.Done*100, units.FormatCount(pr.Records), units.FormatCount(int64(pr.Rate())))
	if left, ok := pr.Left(); ok {
		s += " · " + units.FormatMs(left.Milliseconds()) + " left"
	}
	return s
}
