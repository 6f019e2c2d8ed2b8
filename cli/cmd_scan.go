package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/filter"
	"github.com/idemctl/idemctl/inspect/snapshot"
	"github.com/idemctl/idemctl/internal/units"
)

// newRecordFilter reads --state, --flag and --stale; errors name the flag.
func newRecordFilter(states, flags []string, stale bool) (filter.Filter, error) {
	f := filter.Filter{Stale: stale}
	var err error
	if f.States, err = filter.ParseStates(states); err != nil {
		return f, usageErr("--state: %v", err)
	}
	if f.Flags, err = filter.ParseFlags(flags); err != nil {
		return f, usageErr("--flag: %v", err)
	}
	return f, nil
}

// scanCmd holds scan's flags.
type scanCmd struct {
	readFlags
	output    string
	states    []string
	stale     bool
	flagNames []string
	limit     int64
	// follow streams changes after the pass (cmd_scan_follow.go).
	follow     bool
	followMode string
}

// flags registers scan's flags.
func (o *scanCmd) flags(fs *pflag.FlagSet) {
	outputFlag(fs, &o.output, "", "table (or text), json, ndjson, or pinned: --from-file lines for a guarded write, pinned to each record as read (default: table on a terminal, ndjson otherwise)", "table", "json", "ndjson", "pinned")
	fs.StringSliceVar(&o.states, "state", nil, "only records in these canonical states (comma-separated)")
	fs.BoolVar(&o.stale, "stale", false, "only stale processing records")
	fs.StringSliceVar(&o.flagNames, "flag", nil, "only records with all of these flags (comma-separated)")
	fs.Int64Var(&o.limit, "limit", 0, "stop after printing this many records")
	fs.BoolVar(&o.follow, "follow", false, "after the pass, stream each record as it changes, and removals, stale turns and re-syncs, until interrupted (-o ndjson; see docs/follow.md)")
	fs.StringVar(&o.followMode, "follow-mode", "", "how --follow learns what changed: auto (default), tracking, notifications or periodic")
	o.readFlags.registerSnapshot(fs)
}

func (o *scanCmd) run(ctx context.Context, a *app, _ []string) error {
	format, err := outputFormat(o.output, a.isTTY, "table", "json", "pinned", "ndjson")
	if err != nil {
		return err
	}
	o.readFlags.snap.versions = format == "pinned"
	filter, err := newRecordFilter(o.states, o.flagNames, o.stale)
	if err != nil {
		return err
	}
	if err := o.checkFollow(format); err != nil {
		return err
	}
	s, err := a.openSession(ctx, o.spec(keyspacesRequired))
	if err != nil {
		return err
	}
	defer s.Close()
	if o.follow {
		return o.runFollow(ctx, a, s, filter)
	}
	progress := s.progress(a, "scan", o.sf.quiet)
	defer progress.clear()
	a.noteSnapshot(s)
	s.scan.Versions = format == "pinned"
	w := newRecordWriter(format, a.stdout)
	if format == "pinned" {
		w.pinnedHeader(s)
	}
	var printed int64
	limited := func() bool { return o.limit > 0 && printed >= o.limit }
	covs, err := inspect.Scan(ctx, s.client, s.keyspaces, s.scan, func(b inspect.Batch) error {
		var picked []int
		for i := range b.Records {
			if !filter.Match(&b.Records[i]) {
				continue
			}
			picked = append(picked, i)
			printed++
			if limited() {
				break
			}
		}
		if format == "pinned" {
			w.pinned(ctx, s, b, picked)
		} else {
			for _, i := range picked {
				w.write(&b.Records[i])
			}
		}
		progress.clear()
		if err := w.flush(); err != nil {
			return fmt.Errorf("writing output: %w", err)
		}
		if limited() {
			return inspect.Stop // drained by Scan
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := w.close(); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	if limited() {
		return nil
	}
	return coverageResult(ctx, a, covs, s)
}

// coverageResult warns about empty patterns and turns an incomplete scan
// into exit code 3 with what was covered.
func coverageResult(ctx context.Context, a *app, covs []inspect.Coverage, s *session) error {
	if ctx.Err() != nil {
		return context.Canceled
	}
	var gaps []string
	noted := map[string]bool{}
	for _, c := range covs {
		var se *snapshot.Error
		if errors.As(c.Err, &se) {
			return codeErr(ExitSnapshot, "%s — what is printed was read before it (%d keys of keyspace %s): a partial result", inspect.Line(c.Err.Error()), c.Keys, c.Keyspace)
		}
		if c.Err != nil {
			where := ""
			if c.Node != "" && s.mode == "cluster" {
				where = fmt.Sprintf(" on node %s (slots %s)", c.Node, c.Slots)
			} else if c.Node != "" {
				where = " on " + c.Node
			}
			gaps = append(gaps, fmt.Sprintf("keyspace %s (%s)%s: %v — %d keys read there",
				c.Keyspace, inspect.Sanitize(c.Match), where, inspect.Line(c.Err.Error()), c.Keys))
			continue
		}
		if c.Complete && c.Keys == 0 {
			fmt.Fprintf(a.stderr, "idemctl: no keys match %q in %s\n", inspect.Sanitize(c.Match), s.where())
		}
		if c.ReadPath != "" && c.ReadPath != inspect.ReadScript && c.ReadPath != inspect.ReadClient && !noted[c.ReadPath] {
			noted[c.ReadPath] = true // once, not per keyspace and node
			fmt.Fprintf(a.stderr, "idemctl: note: records read by the %s\n", inspect.Sanitize(c.ReadPath))
		}
		if c.MemoryOff && !s.scan.NoMemory {
			fmt.Fprintln(a.stderr, "idemctl: note: the server refused MEMORY USAGE; memory is unknown (null) for these records")
		}
	}
	if gaps != nil {
		return codeErr(ExitIncomplete, "scan incomplete: %s", strings.Join(gaps, "; "))
	}
	return nil
}

// outputFormat checks -o against the formats a command prints (the first
// the default on a terminal, the last otherwise). Where the human format
// is a table, "text" names it too: every printing command takes -o text.
func outputFormat(v string, tty bool, allowed ...string) (string, error) {
	if v == "text" && !slices.Contains(allowed, "text") && slices.Contains(allowed, "table") {
		return "table", nil
	}
	if v == "" {
		if tty {
			return allowed[0], nil
		}
		return allowed[len(allowed)-1], nil
	}
	for _, a := range allowed {
		if v == a {
			return v, nil
		}
	}
	return "", usageErr("--output %q: want %s", v, strings.Join(allowed, ", "))
}

// recordWriter streams records as a table, a JSON array or NDJSON.
type recordWriter struct {
	format string
	w      *bufio.Writer
	buf    []byte
	n      int
}

func newRecordWriter(format string, out io.Writer) *recordWriter {
	rw := &recordWriter{format: format, w: bufio.NewWriterSize(out, 64<<10)}
	switch format {
	case "table":
		fmt.Fprintf(rw.w, "%-11s %8s %8s %8s %6s %-12s %-24s %s\n",
			"STATE", "AGE", "TTL", "MEMORY", "STATUS", "FINGERPRINT", "FLAGS", "KEY")
	case "json":
		rw.w.WriteString("[")
	}
	return rw
}

func (rw *recordWriter) write(r *inspect.Record) {
	switch rw.format {
	case "table":
		fmt.Fprintf(rw.w, "%-11s %8s %8s %8s %6s %-12s %-24s %s\n",
			r.State, units.FormatMs(r.AgeMs), units.FormatTTL(r.TTLms), units.FormatBytes(r.MemoryBytes),
			statusText(r.Status), inspect.Sanitize(prefix(r.Fingerprint, 12)), flagText(r.Flags),
			inspect.Sanitize(r.Key))
	case "json":
		if rw.n > 0 {
			rw.w.WriteString(",")
		}
		rw.w.WriteString("\n")
		rw.buf = inspect.AppendJSON(rw.buf[:0], r)
		rw.w.Write(rw.buf)
	default:
		rw.buf = inspect.AppendJSON(rw.buf[:0], r)
		rw.buf = append(rw.buf, '\n')
		rw.w.Write(rw.buf)
	}
	rw.n++
}

func (rw *recordWriter) flush() error { return rw.w.Flush() }

func (rw *recordWriter) close() error {
	if rw.format == "json" {
		if rw.n > 0 {
			rw.w.WriteString("\n")
		}
		rw.w.WriteString("]\n")
	}
	return rw.w.Flush()
}

func statusText(s int32) string {
	if s == 0 {
		return "-"
	}
	return strconv.Itoa(int(s))
}

func flagText(f inspect.Flags) string {
	if f == 0 {
		return "-"
	}
	return f.String()
}

func prefix(s string, n int) string {
	if s == "" {
		return "-"
	}
	if len(s) > n {
		return s[:n]
	}
	return s
}
