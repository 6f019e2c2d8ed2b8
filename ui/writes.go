package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

// The Writes screen: this session's writes, newest first (its keys and
// undo are in undo.go).

// WriteRecord is one write of this session, for the writes screen.
type WriteRecord struct {
	At     time.Time
	Result actions.Result
	Entry  *actions.EntryTarget // a pending-entry write's entry (nil: a record's)
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
		m.page.scroll = min(max(m.page.scroll, at-h+2), m.writeSel)
	}
	return b.String()
}

// writesSummary counts this session's writes by outcome.
func (m *Model) writesSummary() string {
	rs := make([]actions.Result, len(m.writes))
	for i, w := range m.writes {
		rs[i] = w.Result
	}
	return units.Nouns(int64(len(rs)), "result", "results") + ": " + actions.Summary(rs).String()
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
		if w.Entry != nil {
			k = inspect.Sanitize(w.Entry.Stream + " " + w.Entry.ID)
		}
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
