package cli

import (
	"context"
	"fmt"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/streams"
)

// targets are the entries a write names: IDs, --from-file lines, or
// every stale (or poison) entry the keyspaces hold now, pinned to the
// consumer and delivery count read.
func (o *streamWriteCmd) targets(ctx context.Context, a *app, s *session, spaces []*streams.Space, args []string) ([]entryTarget, error) {
	sel := &o.sel
	switch {
	case len(args) > 0:
		var out []entryTarget
		for _, id := range args {
			out = append(out, entryTarget{stream: sel.stream, group: sel.groups[0], id: id, space: spaceOf(spaces, sel.stream)})
		}
		return out, nil
	case o.wf.fromFile != "":
		return fromFileEntries(a, o.wf.fromFile, spaces)
	}
	return selectPending(ctx, a, s, spaces, sel, func(e streams.PendingEntry) bool { return sel.stale && e.Stale || sel.poison && e.Poison })
}

// selectPending reads the keyspaces' pending entries and keeps those want
// takes (and --stream, --consumer allow). A group read only in part is
// said: the entries past the cap are not selected.
func selectPending(ctx context.Context, a *app, s *session, spaces []*streams.Space, sel *streamsCmd, want func(streams.PendingEntry) bool) ([]entryTarget, error) {
	var out []entryTarget
	opt := streams.Options{MaxStreams: sel.maxStreams, MaxPending: sel.maxPending}
	for _, sp := range spaces {
		rep, err := streams.Read(ctx, s.client, *sp, opt)
		if err != nil {
			return nil, fmt.Errorf("keyspace %s: %s", inspect.Sanitize(sp.Name), inspect.Line(err.Error()))
		}
		for _, st := range rep.Streams {
			for _, g := range st.Groups {
				if g.Truncated {
					fmt.Fprintf(a.stderr, "note: group %s of %s has more pending entries than the %d read (--max-pending): only those were considered\n",
						inspect.Sanitize(string(g.Name)), inspect.Sanitize(string(st.Key)), sel.maxPending)
				}
				for _, e := range g.Entries {
					if !want(e) || sel.stream != "" && string(e.Stream) != sel.stream || sel.consumer != "" && string(e.Consumer) != sel.consumer {
						continue
					}
					out = append(out, entryTarget{stream: string(e.Stream), group: string(e.Group), id: e.ID, space: sp,
						saw: &actions.EntrySeen{Consumer: string(e.Consumer), Deliveries: e.Deliveries}})
				}
			}
		}
		if rep.Limited {
			fmt.Fprintf(a.stderr, "note: keyspace %s: stopped at %d streams: more may match\n", inspect.Sanitize(sp.Name), len(rep.Streams))
		}
	}
	return out, nil
}

// configStreams are the profile's stream keyspaces (for the exporter).
// Loading the config already checked each one, so none fails here.
func configStreams(s *session) []*streams.Space {
	if s.cfg == nil {
		return nil
	}
	sp, _ := s.cfg.StreamSpaces(s.profile)
	return sp
}

// entryResult is a result with the entry it wrote.
type entryResult struct {
	actions.Result
	Stream string `json:"stream,omitempty"`
	Group  string `json:"group,omitempty"`
	ID     string `json:"id,omitempty"`
}

// printEntryResults reports each entry by stream, group and id (results
// come in plan order); a run of record writes only prints as ever.
func printEntryResults(a *app, format string, plans []*actions.Plan, rs []actions.Result) {
	named := make([]actions.Result, len(rs))
	out := make([]entryResult, len(rs))
	entries := false
	for i, r := range rs {
		named[i], out[i] = r, entryResult{Result: r}
		if e := plans[i].Entry(); e != nil {
			entries = true
			named[i].Key = e.Stream + " group " + e.Group + " entry " + e.ID // printResults sanitizes
			out[i] = entryResult{Result: r, Stream: inspect.Sanitize(e.Stream), Group: inspect.Sanitize(e.Group), ID: inspect.Sanitize(e.ID)}
		}
	}
	if format != "json" || !entries {
		printResults(a, format, named)
		return
	}
	counts := map[string]int{}
	for o, n := range actions.Summary(rs) {
		counts[string(o)] = n
	}
	_ = writeJSON(a, map[string]any{"results": out, "summary": counts})
}
