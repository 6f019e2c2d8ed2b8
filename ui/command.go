package ui

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/inspect"
)

// The command line (:) runs what has no key of its own:
//
//	:export FILE   the filtered view to FILE: CSV when it ends in .csv, else NDJSON
//	               (the same objects as 'idemctl scan --output ndjson')
//	:fail :expire :reconcile   the write dialog on the marked records (or the cursor's)
//	:group NAME    group Records by a capture (:group alone: ungroup)
//	:keyspace NAME scan only that configured keyspace (:keyspace all: every one)
//	:db N          read database N of the same server (read-only sessions)
//	:streams       the consumer groups of the stream keyspaces
//	:q             quit
const commandHelp = "export FILE(.csv|.ndjson) · fail · expire · reconcile · group [NAME] · keyspace NAME|all · db N · profile NAME · doctor · streams · q"

func newCommandInput() textinput.Model {
	in := textinput.New()
	in.Prompt = ":"
	in.Placeholder = commandHelp
	in.CharLimit = 1024
	return in
}

func (m *Model) openCommand() tea.Cmd {
	m.commanding = true
	m.cmdInput.SetValue("")
	m.cmdInput.SetWidth(max(m.width-4, 10))
	return m.cmdInput.Focus()
}

// onCommandKey edits the command line; enter runs it, esc abandons it.
func (m *Model) onCommandKey(msg tea.KeyPressMsg) tea.Cmd {
	switch msg.String() {
	case "esc":
		m.commanding = false
		m.cmdInput.Blur()
		return nil
	case "enter":
		m.commanding = false
		m.cmdInput.Blur()
		return m.runCommand(strings.TrimSpace(m.cmdInput.Value()))
	}
	var cmd tea.Cmd
	m.cmdInput, cmd = m.cmdInput.Update(msg)
	return cmd
}

func (m *Model) runCommand(line string) tea.Cmd {
	name, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	switch name {
	case "":
		return nil
	case "q", "quit":
		m.shutdown()
		return tea.Quit
	case "export":
		if arg == "" {
			m.status = ":export needs a file name, e.g. :export stale.ndjson or :export stale.csv"
			return nil
		}
		return m.export(arg)
	case "fail", "expire", "reconcile":
		m.screen = screenRecords
		return m.openDialog(actions.Kind(name))
	case "keyspace", "ks":
		return m.switchKeyspace(arg)
	case "db":
		return m.switchDB(arg)
	case "profile":
		return m.switchProfile(arg)
	case "streams":
		return m.openStreams()
	case "doctor":
		if m.screen != screenDoctor {
			m.doctorFrom = m.screen
		}
		m.screen, m.page.scroll = screenDoctor, 0
		return nil
	case "group":
		if arg != "" && !containsName(m.captureNames(), arg) {
			m.status = fmt.Sprintf(":group %s: no such capture (these keyspaces have: %s)", inspect.Sanitize(arg), strings.Join(m.captureNames(), ", "))
			return nil
		}
		m.screen = screenRecords
		m.store.setGrouping(arg)
		m.groupCursor, m.groupOffset = 0, 0
		return nil
	}
	m.status = fmt.Sprintf("unknown command %q: %s", inspect.Sanitize(name), commandHelp)
	return nil
}

func containsName(names []string, n string) bool {
	for _, x := range names {
		if x == n {
			return true
		}
	}
	return false
}

// exportedMsg reports a finished export.
type exportedMsg struct {
	path string
	n    int
	err  error
}

// export writes the view as it is now (filter and order) in the
// background: the store's records never change once read, so the writer
// reads them while the UI goes on.
func (m *Model) export(path string) tea.Cmd {
	s := m.store
	view := append([]int32(nil), s.view...)
	csvOut := strings.EqualFold(filepath.Ext(path), ".csv")
	m.status = fmt.Sprintf("exporting %s records to %s…", count(len(view)), inspect.Sanitize(path))
	return func() tea.Msg {
		err := writeExport(path, csvOut, len(view), func(i int) *inspect.Record { return s.recs.At(int(view[i])) })
		return exportedMsg{path: path, n: len(view), err: err}
	}
}

func (m *Model) onExported(msg exportedMsg) {
	if msg.err != nil {
		m.status = "export failed: " + inspect.Sanitize(msg.err.Error())
		return
	}
	m.status = fmt.Sprintf("exported %s records to %s", count(msg.n), inspect.Sanitize(msg.path))
}

// writeExport writes n records to a new file (never over an existing one).
func writeExport(path string, csvOut bool, n int, at func(int) *inspect.Record) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if csvOut {
		err = writeCSV(w, n, at)
	} else {
		var line []byte
		for i := range n {
			line = append(inspect.AppendJSON(line[:0], at(i)), '\n')
			if _, err = w.Write(line); err != nil {
				break
			}
		}
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

var csvHeader = []string{"key", "keyspace", "state", "raw_state", "fingerprint", "ttl_ms", "memory_bytes", "age_ms", "stale", "flags", "groups"}

func writeCSV(w *bufio.Writer, n int, at func(int) *inspect.Record) error {
	c := csv.NewWriter(w)
	if err := c.Write(csvHeader); err != nil {
		return err
	}
	for i := range n {
		r := at(i)
		ks := ""
		var groups []string
		if r.Keyspace != nil {
			ks = r.Keyspace.Name
			for j, name := range r.Keyspace.Template.Names() {
				if j < len(r.Groups) {
					groups = append(groups, name+"="+r.Groups[j])
				}
			}
		}
		// Text from Redis is guarded; the numbers are ours (-1 stays -1).
		row := []string{csvSafe(r.Key), csvSafe(ks), r.State.String(), csvSafe(r.RawState), csvSafe(r.Fingerprint),
			strconv.FormatInt(r.TTLms, 10), strconv.FormatInt(r.MemoryBytes, 10), strconv.FormatInt(r.AgeMs, 10),
			strconv.FormatBool(r.Stale()), r.Flags.String(), csvSafe(strings.Join(groups, " "))}
		if err := c.Write(row); err != nil {
			return err
		}
	}
	c.Flush()
	return c.Error()
}

// csvSafe keeps a spreadsheet from reading a value from Redis as a
// formula: a leading = + - @ (or tab, CR) gets a quote in front.
func csvSafe(v string) string {
	if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
		return "'" + v
	}
	return v
}
