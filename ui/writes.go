package ui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
	"github.com/idemctl/idemctl/ui/common"
)

// writesScreen is the Writes screen: this session's writes, newest first,
// one selected (u undoes it: undo.go).
type writesScreen struct {
	*shared
	list []WriteRecord
	// sel is the line selected, counted from the newest (0); follow: a
	// key moved it, and the screen scrolls to show it.
	sel    int
	follow bool
	page   pager
	w, h   int
}

func newWritesScreen(c *shared) *writesScreen { return &writesScreen{shared: c} }

// Open shows the newest write, selected.
func (ws *writesScreen) Open() { ws.page.scroll, ws.sel = 0, 0 }

func (ws *writesScreen) SetSize(width, height int) { ws.w, ws.h = width, height }

// Update takes a key: the moves select a line and the screen follows it;
// a write key in a session that cannot write says why (u itself, when it
// can, is the root's: it opens the write dialog).
func (ws *writesScreen) Update(msg tea.Msg) tea.Cmd {
	k, ok := msg.(tea.KeyPressMsg)
	switch {
	case !ok:
	case !ws.CanWrite() && ws.Keys.IsWriteKey(k):
		ws.Status = ws.OffHint(false)
	default:
		if d, ok := ws.Keys.Moves(k, ws.h); ok {
			lines, _ := ws.lines()
			ws.sel = min(max(ws.sel+d, 0), max(len(lines)-1, 0))
			ws.follow = true
		}
	}
	return nil
}

// selected is the write the selected line shows.
func (ws *writesScreen) selected() (WriteRecord, bool) {
	_, idx := ws.lines()
	if ws.sel >= len(idx) {
		return WriteRecord{}, false
	}
	return ws.list[idx[ws.sel]], true
}

func (ws *writesScreen) View() string { return ws.page.show(ws.shared, ws.content(), ws.h) }

// WriteRecord is one write of this session, for the writes screen.
type WriteRecord struct {
	At     time.Time
	Result actions.Result
	Entry  *actions.EntryTarget // a pending-entry write's entry (nil: a record's)
}

// content lists this session's writes, newest first.
func (ws *writesScreen) content() string {
	s := ws.Styles
	var b strings.Builder
	b.WriteString(s.Title.Render("WRITES THIS SESSION"))
	if !ws.CanWrite() {
		b.WriteString("\n\n" + ansi.Wrap(s.Dim.Render(ws.OffHint(false)), ws.w, " "))
		return b.String()
	}
	// The path is shortened in its middle: its file name stays in view.
	const label = "  audit log: "
	room := max(ws.w-ansi.StringWidth("WRITES THIS SESSION"+label), 12)
	b.WriteString(s.Dim.Render(label + strings.TrimRight(common.FitMiddle(ws.Opts.Executor.Audit.Path(), room), " ")))
	if len(ws.list) == 0 {
		b.WriteString("\n\n" + ansi.Wrap(s.Dim.Render("none yet. Mark records with space (a: all in view), then E expire · F force-fail · R reconcile."), ws.w, " "))
		return b.String()
	}
	b.WriteString("\n" + s.Dim.Render(ws.summary()+" · u undoes ▸"))
	lines, _ := ws.lines()
	for _, l := range lines {
		b.WriteString("\n" + l)
	}
	if ws.follow {
		// a key moved the selection: keep it on screen, it is what u
		// undoes; it sits under the title and the summary, and the last
		// line may say more follows
		ws.follow = false
		at, h := 2+ws.sel, ws.h
		ws.page.scroll = min(max(ws.page.scroll, at-h+2), ws.sel)
	}
	return b.String()
}

// summary counts this session's writes by outcome.
func (ws *writesScreen) summary() string {
	rs := make([]actions.Result, len(ws.list))
	for i, w := range ws.list {
		rs[i] = w.Result
	}
	return units.Nouns(int64(len(rs)), "result", "results") + ": " + actions.Summary(rs).String()
}

// lines are the writes newest first, one line each, cut to the width
// with the key shortened in its middle. A run of results that were never
// attempted (a cancelled bulk write) is one line, so it cannot bury the
// writes that were made.
// The line ws.sel (what u undoes) is marked after its time; idx holds
// each line's write (the newest of a folded run).
func (ws *writesScreen) lines() (out []string, idx []int) {
	for i := len(ws.list) - 1; i >= 0; i-- {
		w := ws.list[i]
		idx = append(idx, i)
		mark := " "
		if len(out) == ws.sel {
			mark = "▸"
		}
		outcome := string(w.Result.Outcome)
		if w.Result.Unreplicated() {
			outcome = "NOT REPL." // applied on the primary only: a failover could take it back
		}
		head := fmt.Sprintf("%s%s%-9s %-11s ", w.At.Format("15:04:05"), mark, w.Result.Action, outcome)
		if w.Result.Outcome == write.Skipped {
			j := i
			for j > 0 && ws.list[j-1].Result.Outcome == write.Skipped && ws.list[j-1].Result.Action == w.Result.Action {
				j--
			}
			if n := i - j + 1; n > 1 {
				out = append(out, common.Fit(head+units.FormatCount(int64(n))+" records — "+inspect.Sanitize(w.Result.Detail), ws.w))
				i = j
				continue
			}
		}
		rest := ws.w - ansi.StringWidth(head)
		k := inspect.Sanitize(ws.withoutPrefix(w.Result.Key))
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
		out = append(out, common.Fit(head+common.FitMiddle(k, kw)+detail, ws.w))
	}
	return out, idx
}

// withoutPrefix drops the constant prefix of the keyspace a key belongs to,
// as the table does; the header names the keyspaces.
func (c *shared) withoutPrefix(k string) string {
	for _, ks := range c.Opts.Keyspaces {
		if p := ks.Template.Prefix(); p != "" && strings.HasPrefix(k, p) && len(c.Opts.Keyspaces) == 1 {
			return strings.TrimPrefix(k, p)
		}
	}
	return k
}

// footer is the help line's keys on the Writes screen of a session that
// writes: u undoes the selected write.
func (ws *writesScreen) footer() []common.KeyBinding {
	k := ws.Keys
	undo := key.NewBinding(key.WithKeys(k.Undo.Keys()...), key.WithHelp(k.Undo.Help().Key, "undo the selected write"))
	return []common.KeyBinding{k.Help, undo, k.Up, k.Down, k.NextScreen, k.Quit}
}
