package ui

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/ui/common"
)

// :export FILE: the filtered view to a new file.

// exportedMsg reports a finished export.
type exportedMsg struct {
	path string
	n    int
	err  error
}

// export writes the view as it is now (filter and order) in the
// background: the store's records never change once read, so the writer
// reads them while the UI goes on.
func (c *shared) export(path string) tea.Cmd {
	s := c.store
	view := append([]int32(nil), s.view...)
	csvOut := strings.EqualFold(filepath.Ext(path), ".csv")
	c.Status = fmt.Sprintf("exporting %s records to %s…", common.Count(len(view)), inspect.Sanitize(path))
	return func() tea.Msg {
		err := writeExport(path, csvOut, len(view), func(i int) *inspect.Record { return s.recs.At(int(view[i])) })
		return exportedMsg{path: path, n: len(view), err: err}
	}
}

func (c *shared) onExported(msg exportedMsg) {
	if msg.err != nil {
		c.Status = "export failed: " + inspect.Sanitize(msg.err.Error())
		return
	}
	c.Status = fmt.Sprintf("exported %s records to %s", common.Count(msg.n), inspect.Sanitize(msg.path))
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
