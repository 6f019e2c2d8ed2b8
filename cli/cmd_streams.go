package cli

import (
	"bufio"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/cli/docgen"
	"github.com/idemctl/idemctl/cli/report"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/streams"
	"github.com/idemctl/idemctl/internal/units"
)

// streamsCmd holds streams' flags.
type streamsCmd struct {
	cf            connFlags
	keyspaces     []string
	match         string
	groups        []string
	timeout       time.Duration
	maxDeliveries int
	output        string
	pending       bool
	stale         bool
	poison        bool
	consumer      string
	stream        string
	entry         string
	maxStreams    int
	maxPending    int
	maxValue      int64
	failOnStale   bool
	failOnPoison  bool
	// given (resolveFlags): --timeout and --max-deliveries given override
	// every keyspace's own; --max-value given is checked.
	given struct{ timeout, maxDeliveries, maxValue bool }
}

// resolveFlags records which of its flags were given (streams' own, and a
// write's selection of entries).
func (o *streamsCmd) resolveFlags(fs *pflag.FlagSet) {
	o.cf.resolveFlags(fs)
	o.given.timeout, o.given.maxDeliveries, o.given.maxValue = fs.Changed("timeout"), fs.Changed("max-deliveries"), fs.Changed("max-value")
}

// flags registers streams' flags.
func (o *streamsCmd) flags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.keyspaces, "keyspace", nil, "stream keyspace(s) from the config file (default: the profile's kind: stream keyspaces)")
	fs.StringVar(&o.match, "match", "", "SCAN MATCH pattern of stream keys, instead of configured keyspaces")
	fs.StringSliceVar(&o.groups, "group", nil, "only these consumer groups (default: the keyspace's, or all)")
	fs.Var(durationValue(&o.timeout), "timeout", "a pending entry idle longer than this is stale (default: the keyspace's, or 5m)")
	fs.IntVar(&o.maxDeliveries, "max-deliveries", 0, "delivered more often than this: poison (default: the keyspace's, or 5)")
	fs.BoolVar(&o.pending, "pending", false, "list the pending entries instead of the per-group summary")
	fs.BoolVar(&o.stale, "stale", false, "with --pending: only stale entries")
	fs.BoolVar(&o.poison, "poison", false, "with --pending: only poison entries")
	fs.StringVar(&o.consumer, "consumer", "", "with --pending: only this consumer's entries")
	fs.StringVar(&o.stream, "stream", "", "with --entry: the stream key")
	fs.StringVar(&o.entry, "entry", "", "show this entry's fields (an ID such as 1700000000000-0; needs --stream)")
	fs.IntVar(&o.maxStreams, "max-streams", streams.DefaultMaxStreams, "streams read at most (the output says when the limit was reached)")
	fs.IntVar(&o.maxPending, "max-pending", streams.DefaultMaxPending, fmt.Sprintf("pending entries read per group, at most %d (the output says truncated when more)", streams.MaxStreamPending))
	fs.Var(sizeValue(&o.maxValue), "max-value", "with --entry: bytes shown of each field name and value (default 4KiB; longer ones are cut on the server)")
	fs.BoolVar(&o.failOnStale, "fail-on-stale", false, "exit 8 when a stale pending entry is found (3 when none was, but not every entry was read)")
	fs.BoolVar(&o.failOnPoison, "fail-on-poison", false, "exit 8 when a poison pending entry is found (3 when none was, but not every entry was read)")
	outputFlag(fs, &o.output, "", "table (or text) or json (default: table on a terminal, json otherwise)", "table", "json")
	registerGroup(fs, docgen.GroupConnection, o.cf.register)
}

func (o *streamsCmd) check() error {
	switch {
	case o.maxStreams < 1:
		return usageErr("--max-streams must be at least 1")
	case o.maxPending < 1 || o.maxPending > streams.MaxStreamPending:
		return usageErr("--max-pending must be 1 to %d", streams.MaxStreamPending)
	case o.maxDeliveries < 0:
		return usageErr("--max-deliveries must not be negative")
	case o.given.maxValue && (o.maxValue < 16 || o.maxValue > streams.MaxEntryValueCap):
		return usageErr("--max-value must be 16 bytes to %s", units.FormatBytes(streams.MaxEntryValueCap))
	case (o.entry == "") != (o.stream == ""):
		return usageErr("--entry ID and --stream KEY go together")
	case !o.pending && (o.stale || o.poison || o.consumer != ""):
		return usageErr("--stale, --poison and --consumer filter --pending")
	case o.match != "" && len(o.keyspaces) > 0:
		return usageErr("use --match or --keyspace, not both")
	}
	return nil
}

func (o *streamsCmd) run(ctx context.Context, a *app, _ []string) error {
	format, err := outputFormat(o.output, a.isTTY, "table", "json")
	if err != nil {
		return err
	}
	if err := o.check(); err != nil {
		return err
	}
	s, err := a.openSession(ctx, sessionSpec{conn: &o.cf}) // dialled once the keyspaces are checked
	if err != nil {
		return err
	}
	var spaces []*streams.Space
	if o.entry == "" {
		if spaces, err = o.spaces(s); err != nil {
			return err
		}
	}
	if err := s.connect(ctx, a); err != nil {
		return err
	}
	defer s.Close()
	if o.entry != "" {
		return o.showEntry(ctx, a, s, format)
	}
	opt := streams.Options{MaxStreams: o.maxStreams, MaxPending: o.maxPending}
	var reps []streams.Report
	for _, sp := range spaces {
		rep, err := streams.Read(ctx, s.client, *sp, opt)
		if err != nil {
			return fmt.Errorf("keyspace %s: %s", sp.Name, inspect.Line(err.Error()))
		}
		reps = append(reps, rep)
	}
	if err := o.write(a, format, spaces, reps); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	return o.verdict(reps)
}

// spaces are the stream keyspaces to read: ad hoc from --match, named by
// --keyspace, or the profile's; the threshold flags override theirs.
func (o *streamsCmd) spaces(s *session) ([]*streams.Space, error) {
	var out []*streams.Space
	if o.match != "" {
		out = []*streams.Space{{Name: o.match, Match: o.match}}
	} else {
		all, err := s.cfg.StreamSpaces(nil)
		if err != nil {
			return nil, usageErr("%v", err)
		}
		if len(o.keyspaces) == 0 {
			out, _ = s.cfg.StreamSpaces(s.profile)
		}
		for _, n := range o.keyspaces {
			i := slices.IndexFunc(all, func(sp *streams.Space) bool { return sp.Name == n })
			if i < 0 {
				return nil, usageErr("--keyspace %s: not a kind: stream keyspace of the config file", n)
			}
			out = append(out, all[i])
		}
	}
	if len(out) == 0 {
		return nil, usageErr("no stream keyspace to read: pass --match PATTERN, or configure a keyspace with kind: stream")
	}
	for _, sp := range out {
		if o.given.timeout {
			sp.ProcessingTimeout = o.timeout
		}
		if o.given.maxDeliveries {
			sp.MaxDeliveries = int64(o.maxDeliveries)
		}
		if len(o.groups) > 0 {
			sp.Groups = o.groups
		}
		*sp = sp.WithDefaults()
	}
	return out, nil
}

// verdict is the exit code: 8 when --fail-on-stale or --fail-on-poison
// found one; 3 when it found none but could not read every entry.
func (o *streamsCmd) verdict(reps []streams.Report) error {
	if !o.failOnStale && !o.failOnPoison {
		return nil
	}
	var stale, poison int
	cut := false
	for _, r := range reps {
		cut = cut || r.Limited
		for _, st := range r.Streams {
			for _, g := range st.Groups {
				stale, poison, cut = stale+g.Stale, poison+g.Poison, cut || g.Truncated
			}
		}
	}
	switch {
	case o.failOnStale && stale > 0 || o.failOnPoison && poison > 0:
		return codeErr(ExitThreshold, "found %d stale and %d poison pending entries", stale, poison)
	case cut:
		return codeErr(ExitIncomplete, "no stale or poison entry among those read, but not every stream or entry was read (raise --max-streams or --max-pending)")
	}
	return nil
}

// write prints the reports: per group, or the pending entries with --pending.
func (o *streamsCmd) write(a *app, format string, spaces []*streams.Space, reps []streams.Report) error {
	for i := range reps {
		o.filter(&reps[i])
	}
	if format == "json" {
		return writeJSON(a, map[string]any{"keyspaces": reps})
	}
	w := bufio.NewWriter(a.stdout)
	for i, r := range reps {
		if i > 0 {
			fmt.Fprintln(w)
		}
		report.StreamsHeader(w, spaces[i], r)
		if o.pending {
			report.Pending(w, r)
		} else {
			report.Groups(w, r)
		}
		report.StreamNotes(w, r, o.maxPending)
	}
	return w.Flush()
}

// filter keeps the entries --pending asked for (none without it).
func (o *streamsCmd) filter(r *streams.Report) {
	for si := range r.Streams {
		for gi := range r.Streams[si].Groups {
			g := &r.Streams[si].Groups[gi]
			kept := []streams.PendingEntry{}
			for _, e := range g.Entries {
				if o.pending && (!o.stale || e.Stale) && (!o.poison || e.Poison) && (o.consumer == "" || string(e.Consumer) == o.consumer) {
					kept = append(kept, e)
				}
			}
			if g.Oldest != nil {
				oldest := *g.Oldest
				g.Oldest = &oldest // not into the filtered slice
			}
			g.Entries = kept
		}
	}
}

// showEntry prints one entry's fields, each cut on the server.
func (o *streamsCmd) showEntry(ctx context.Context, a *app, s *session, format string) error {
	e, err := streams.ReadEntry(ctx, s.client, o.stream, o.entry, int(o.maxValue), streams.DefaultEntryFields)
	if err != nil {
		return fmt.Errorf("%s", inspect.Line(err.Error()))
	}
	if !e.Found {
		return codeErr(ExitNotFound, "stream %s has no entry %s", inspect.Sanitize(o.stream), inspect.Sanitize(o.entry))
	}
	if format == "json" {
		err = writeJSON(a, e)
	} else {
		w := bufio.NewWriter(a.stdout)
		report.Entry(w, e)
		err = w.Flush()
	}
	if err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	return nil
}
