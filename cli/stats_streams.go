package cli

import (
	"context"
	"fmt"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/streams"
)

// statsWithStreams is stats' JSON: the records' report and, where the
// profile has stream keyspaces, their per-group counts.
type statsWithStreams struct {
	inspect.Report
	Streams []streams.Report `json:"streams,omitempty"`
}

// statsStreams reads the profile's stream keyspaces for stats (a live
// server only: a snapshot holds no consumer group state idemctl reads).
// A read that fails is a note on stderr, not a failed stats.
func statsStreams(ctx context.Context, a *app, s *session) ([]*streams.Space, []streams.Report) {
	if s.snap != nil {
		return nil, nil
	}
	var spaces []*streams.Space
	var reps []streams.Report
	for _, sp := range configStreams(s) {
		rep, err := streams.Read(ctx, s.client, *sp, streams.Options{})
		if err != nil {
			fmt.Fprintf(a.stderr, "idemctl stats: stream keyspace %s not read: %s\n", inspect.Sanitize(sp.Name), inspect.Line(err.Error()))
			continue
		}
		for i := range rep.Streams {
			for j := range rep.Streams[i].Groups {
				rep.Streams[i].Groups[j].Entries = nil // counts only: streams --pending lists them
			}
		}
		spaces, reps = append(spaces, sp), append(reps, rep)
	}
	return spaces, reps
}
