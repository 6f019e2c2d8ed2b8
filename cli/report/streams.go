package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/streams"
	"github.com/idemctl/idemctl/internal/units"
)

func StreamsHeader(w io.Writer, sp *streams.Space, r streams.Report) {
	fmt.Fprintf(w, "KEYSPACE %s (%s): stale after %s idle, poison after %d deliveries, %d streams\n",
		inspect.Sanitize(sp.Name), inspect.Sanitize(string(r.Match)), sp.ProcessingTimeout, sp.MaxDeliveries, len(r.Streams))
}

func Groups(w io.Writer, r streams.Report) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STREAM\tGROUP\tPENDING\tSTALE\tPOISON\tCONSUMERS\tOLDEST PENDING\tLAG")
	for _, st := range r.Streams {
		if len(st.Groups) == 0 {
			fmt.Fprintf(tw, "%s\t(no group)\t\t\t\t\t\t\n", inspect.Sanitize(string(st.Key)))
		}
		for _, g := range st.Groups {
			more := ""
			if g.Truncated {
				more = "+" // counted among the entries read only
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d%s\t%d%s\t%d\t%s\t%s\n", inspect.Sanitize(string(st.Key)), inspect.Sanitize(string(g.Name)),
				g.Pending, g.Stale, more, g.Poison, more, g.Consumers, oldestText(g), lagText(g.Lag))
		}
	}
	tw.Flush()
}

func oldestText(g streams.GroupState) string {
	if g.Oldest == nil {
		return "-"
	}
	age := "age unknown"
	if g.OldestAge != nil {
		age = units.FormatMs(g.OldestAge.D().Milliseconds())
	}
	return fmt.Sprintf("%s (idle %s)", age, units.FormatMs(g.Oldest.Idle.D().Milliseconds()))
}

func lagText(lag *int64) string {
	if lag == nil {
		return "unknown"
	}
	return units.FormatCount(*lag)
}

func Pending(w io.Writer, r streams.Report) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STREAM\tGROUP\tID\tCONSUMER\tIDLE\tDELIVERIES\tFLAGS")
	for _, st := range r.Streams {
		for _, g := range st.Groups {
			for _, e := range g.Entries {
				var flags []string
				if e.Stale {
					flags = append(flags, "stale")
				}
				if e.Poison {
					flags = append(flags, "poison")
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", inspect.Sanitize(string(e.Stream)), inspect.Sanitize(string(e.Group)),
					inspect.Sanitize(e.ID), inspect.Sanitize(string(e.Consumer)), units.FormatMs(e.Idle.D().Milliseconds()), e.Deliveries, strings.Join(flags, ","))
			}
		}
	}
	tw.Flush()
}

// StreamNotes says what was cut or skipped.
func StreamNotes(w io.Writer, r streams.Report, maxPending int) {
	if r.Limited {
		fmt.Fprintf(w, "note: stopped at %d streams (--max-streams): more may match\n", len(r.Streams))
	}
	for _, st := range r.Streams {
		for _, g := range st.Groups {
			if g.Truncated {
				fmt.Fprintf(w, "note: truncated: only the oldest %d of %d pending entries of group %s of %s were read (--max-pending)\n",
					maxPending, g.Pending, inspect.Sanitize(string(g.Name)), inspect.Sanitize(string(st.Key)))
			}
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

func Entry(w io.Writer, e streams.Entry) {
	fmt.Fprintf(w, "STREAM %s  ENTRY %s  %d fields\n", inspect.Sanitize(string(e.Stream)), inspect.Sanitize(e.ID), e.FieldCount)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FIELD\tVALUE")
	for _, f := range e.Fields {
		fmt.Fprintf(tw, "%s%s\t%s%s\n", inspect.Sanitize(string(f.Name)), cutNote(len(f.Name), f.NameLen),
			inspect.Sanitize(string(f.Value)), cutNote(len(f.Value), f.ValueLen))
	}
	tw.Flush()
	if e.FieldsCut {
		fmt.Fprintf(w, "note: truncated: %d of %d fields shown\n", len(e.Fields), e.FieldCount)
	}
}

// cutNote says a value was cut: its full size and how much is shown.
func cutNote(shown int, full int64) string {
	if int64(shown) >= full {
		return ""
	}
	return fmt.Sprintf("… (%s, first %s shown)", units.FormatBytes(full), units.FormatBytes(int64(shown)))
}

// StatsStreams is the table's streams section.
func StatsStreams(w io.Writer, spaces []*streams.Space, reps []streams.Report) {
	for i, r := range reps {
		fmt.Fprintln(w)
		StreamsHeader(w, spaces[i], r)
		Groups(w, r)
		StreamNotes(w, r, streams.DefaultMaxPending)
	}
}
