package exporter

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/streams"
)

// Stream metrics come from each stream keyspace's last complete read, as
// record metrics do, summed per consumer group name over the keyspace's
// streams: groups are few, streams may be thousands.
var (
	mStreamStreams = def("stream_streams", gauge, "Streams read in each stream keyspace (last complete read).", "keyspace")
	mStreamPending = def("stream_pending_entries", gauge, "Pending entries of each consumer group, summed over the keyspace's streams (XPENDING; last complete read).", "keyspace", "group")
	mStreamStale   = def("stream_stale_entries", gauge, "Pending entries idle longer than the keyspace's processing_timeout: their consumer probably crashed (among the entries read).", "keyspace", "group")
	mStreamPoison  = def("stream_poison_entries", gauge, "Pending entries delivered more often than the keyspace's max_deliveries (among the entries read).", "keyspace", "group")
	mStreamOldest  = def("stream_oldest_pending_age_seconds", gauge, "Age of the group's oldest pending entry, from its ID, over the keyspace's streams (last complete read).", "keyspace", "group")
	mStreamLag     = def("stream_lag_entries", gauge, "Entries not yet delivered to the group, summed over the streams whose server reports lag (last complete read).", "keyspace", "group")
	mStreamCut     = def("stream_read_truncated", gauge, "1 when the last read of the keyspace was cut by a bound (streams, or pending entries of a group): the stale and poison counts are of the entries read.", "keyspace")
)

var streamMetrics = []*metricDef{mStreamStreams, mStreamPending, mStreamStale, mStreamPoison, mStreamOldest, mStreamLag, mStreamCut}

func init() { allMetrics = append(allMetrics, streamMetrics...) }

// groupTotals are one group name's figures over a keyspace's streams.
type groupTotals struct {
	pending, stale, poison, lag int64
	oldestMs                    int64
}

// streamSeries is one stream keyspace's last complete read, folded.
type streamSeries struct {
	name      string
	streams   int
	truncated bool
	groups    map[string]*groupTotals
	order     []string // group names as first seen
}

// readStreams reads the configured stream keyspaces for this scan and keeps
// each read that ended without an error.
func (e *Exporter) readStreams(ctx context.Context, c redis.UniversalClient) {
	for _, sp := range e.cfg.Streams {
		rep, err := streams.Read(ctx, c, *sp, streams.Options{})
		if err != nil {
			if ctx.Err() == nil {
				fmt.Fprintf(e.cfg.Log, "idemctl exporter: stream keyspace %s: read failed: %s\n", sp.Name, inspect.Line(err.Error()))
			}
			continue // the last complete read stands
		}
		s := foldStreams(sp.Name, rep)
		e.mu.Lock()
		if e.streams == nil {
			e.streams = map[string]streamSeries{}
		}
		e.streams[sp.Name] = s
		e.mu.Unlock()
	}
}

func foldStreams(name string, rep streams.Report) streamSeries {
	s := streamSeries{name: name, streams: len(rep.Streams), truncated: rep.Limited, groups: map[string]*groupTotals{}}
	for _, st := range rep.Streams {
		for _, g := range st.Groups {
			name := inspect.Sanitize(string(g.Name)) // a label value from Redis: escaped, as everywhere
			t := s.groups[name]
			if t == nil {
				t = &groupTotals{}
				s.groups[name] = t
				s.order = append(s.order, name)
			}
			t.pending += g.Pending
			t.stale += int64(g.Stale)
			t.poison += int64(g.Poison)
			if g.Lag != nil {
				t.lag += *g.Lag
			}
			if g.OldestAge != nil {
				t.oldestMs = max(t.oldestMs, g.OldestAge.D().Milliseconds())
			}
			s.truncated = s.truncated || g.Truncated
		}
	}
	return s
}

// streamView copies the stream state in the configured order (caller
// holds e.mu).
func (e *Exporter) streamView() []streamSeries {
	var out []streamSeries
	for _, sp := range e.cfg.Streams {
		if s, ok := e.streams[sp.Name]; ok {
			out = append(out, s)
		}
	}
	return out
}

func emitStreams(emit func(m *metricDef, v float64, labels ...string), ss []streamSeries) {
	for _, s := range ss {
		emit(mStreamStreams, float64(s.streams), s.name)
		cut := 0.0
		if s.truncated {
			cut = 1
		}
		emit(mStreamCut, cut, s.name)
		for _, g := range s.order {
			t := s.groups[g]
			emit(mStreamPending, float64(t.pending), s.name, g)
			emit(mStreamStale, float64(t.stale), s.name, g)
			emit(mStreamPoison, float64(t.poison), s.name, g)
			emit(mStreamOldest, float64(t.oldestMs)/1000, s.name, g)
			emit(mStreamLag, float64(t.lag), s.name, g)
		}
	}
}
