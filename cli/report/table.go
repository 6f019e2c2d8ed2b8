// Package report is the text the commands print of what the engine read:
// the stats table, the streams' groups, pending entries and an entry, the
// ledgers, the doctor's findings, detect's timing, each written to an
// io.Writer from the engine's own values. It holds no command state: a
// command picks the format and calls it.
//
// Floor 5 of ARCHITECTURE.md, with the command layer it serves: it may
// import floors 0–4 (it uses the engine's and the doctor's reports), never
// cli/ itself.
package report

import (
	"io"
	"text/tabwriter"
)

// NewTable is how the CLI prints a table whose cells hold names from the
// data, the config or the operator: columns end at a tab, each padded to
// its widest cell and one space. A cell written pre-padded (%-20s, %10s)
// keeps the width and alignment it always had, and a longer one widens
// its whole column: a 60-character keyspace name moves every row's next
// column, never just its own. Flush it before writing past the table.
func NewTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
}
