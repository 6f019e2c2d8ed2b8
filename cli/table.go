package cli

import (
	"io"
	"text/tabwriter"
)

// newTable is how the CLI prints a table whose cells hold names from the
// data, the config or the operator: columns end at a tab, each padded to
// its widest cell and one space. A cell written pre-padded (%-20s, %10s)
// keeps the width and alignment it always had, and a longer one widens
// its whole column: a 60-character keyspace name moves every row's next
// column, never just its own. Flush it before writing past the table.
func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
}
