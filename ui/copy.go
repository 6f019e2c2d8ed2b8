package ui

import (
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/inspect"
)

// selection is what y and Y act on: the detail screen's record, else the
// marked records, else the one under the cursor.
func (m *Model) selection() []inspect.Record {
	if m.screen == screenDetail && m.detail != nil {
		return []inspect.Record{m.detail.shown()}
	}
	if recs := m.markedRecords(); len(recs) > 0 {
		return recs
	}
	if r := m.store.at(m.cursor); r != nil && !m.grouped() {
		return []inspect.Record{*r}
	}
	return nil
}

// copyText puts text on the terminal's clipboard (OSC 52, which the
// terminal receives base64-encoded) and says what was copied. Text with
// control bytes from Redis is refused: pasted into a shell it could run
// something.
func (m *Model) copyText(what, text string) tea.Cmd {
	if inspect.Sanitize(text) != text {
		m.status = what + " not copied: the key holds control or invalid bytes that would not paste safely"
		return nil
	}
	m.status = "copied " + what + " (OSC 52): " + text
	return tea.SetClipboard(text)
}

// copyKey copies the selected record's key (y).
func (m *Model) copyKey() tea.Cmd {
	sel := m.selection()
	if len(sel) == 0 {
		return nil
	}
	return m.copyText("the key", sel[0].Key)
}

// copyCommand copies the CLI command for the selection (Y): the guarded
// write its state calls for, pinned to the state and fingerprint shown and
// with --dry-run, so pasting it shows the change before anything is
// written.
func (m *Model) copyCommand() tea.Cmd {
	sel := m.selection()
	if len(sel) == 0 {
		return nil
	}
	return m.copyText("the command", m.cliCommand(sel))
}

func (m *Model) cliCommand(sel []inspect.Record) string {
	action := "fail"
	if sel[0].State != inspect.StateProcessing {
		action = "expire --ttl 10m"
	}
	var b strings.Builder
	b.WriteString("idemctl " + action)
	if p := m.opts.Profile; p != "" && !m.opts.Demo {
		b.WriteString(" --profile " + shellWord(p))
	}
	for _, r := range sel {
		b.WriteString(" " + shellWord(r.Key))
	}
	if len(sel) == 1 {
		if sel[0].RawState != "" {
			b.WriteString(" --expect-state " + shellWord(sel[0].RawState))
		}
		if sel[0].Fingerprint != "" {
			b.WriteString(" --expect-fingerprint " + shellWord(sel[0].Fingerprint))
		}
	}
	b.WriteString(" --reason 'TODO: why' --dry-run")
	return b.String()
}

// shellWord quotes s for a POSIX shell.
func shellWord(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
