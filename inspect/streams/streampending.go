package streams

import (
	"context"
	"sort"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
)

// GroupState is one consumer group of a stream: what XINFO GROUPS says,
// its consumers, the XPENDING summary and the pending entries read (the
// oldest first, at most MaxPending).
type GroupState struct {
	Stream          inspect.Text    `json:"stream"`
	Name            inspect.Text    `json:"group"`
	Consumers       int64           `json:"consumers"`
	Pending         int64           `json:"pending"`
	LastDeliveredID string          `json:"last_delivered_id"`
	EntriesRead     int64           `json:"entries_read"`
	Lag             *int64          `json:"lag"` // nil: the server cannot tell
	ConsumerList    []ConsumerState `json:"consumer_list"`
	ConsumersCut    bool            `json:"consumers_truncated"`
	Summary         PendingSummary  `json:"summary"`
	Entries         []PendingEntry  `json:"entries"`
	Truncated       bool            `json:"truncated"` // more entries pending than were read
	Stale           int             `json:"stale"`     // among the entries read
	Poison          int             `json:"poison"`
	Oldest          *PendingEntry   `json:"oldest"`
	OldestAge       *Millis         `json:"oldest_age_ms"` // now minus the oldest entry's ID time; nil: no entry, or an ID not from a clock
}

// ConsumerState is one consumer of a group (XINFO CONSUMERS).
type ConsumerState struct {
	Name     inspect.Text `json:"name"`
	Pending  int64        `json:"pending"`
	Idle     Millis       `json:"idle_ms"`     // since its last attempted interaction
	Inactive *Millis      `json:"inactive_ms"` // since its last successful one; nil: not reported (before Redis 7.2)
}

// PendingSummary is XPENDING's summary form: how many, the smallest and
// largest pending IDs, and per consumer how many.
type PendingSummary struct {
	Count       int64           `json:"count"`
	Smallest    string          `json:"smallest_id"`
	Largest     string          `json:"largest_id"`
	PerConsumer []ConsumerCount `json:"per_consumer"`
}

// ConsumerCount is one consumer's pending entries.
type ConsumerCount struct {
	Name    inspect.Text `json:"name"`
	Pending int64        `json:"pending"`
}

// PendingEntry is one message delivered to a consumer and not
// acknowledged: stale once idle past the space's timeout, poison once
// delivered more often than its maximum.
type PendingEntry struct {
	Stream     inspect.Text `json:"stream"`
	Group      inspect.Text `json:"group"`
	ID         string       `json:"id"`
	Consumer   inspect.Text `json:"consumer"`
	Idle       Millis       `json:"idle_ms"`
	Deliveries int64        `json:"deliveries"`
	Stale      bool         `json:"stale"`
	Poison     bool         `json:"poison"`
}

func newGroupState(stream string, g redis.XInfoGroup) GroupState {
	gs := GroupState{Stream: inspect.Text(stream), Name: inspect.Text(g.Name), Consumers: g.Consumers, Pending: g.Pending,
		LastDeliveredID: g.LastDeliveredID, EntriesRead: g.EntriesRead, ConsumerList: []ConsumerState{}, Entries: []PendingEntry{}}
	if g.Lag >= 0 {
		lag := g.Lag
		gs.Lag = &lag
	}
	return gs
}

// groupCmds are one group's replies in a batch's second pipeline.
type groupCmds struct {
	consumers *redis.Cmd
	summary   *redis.XPendingCmd
	entries   *redis.XPendingExtCmd
}

// readGroups reads every group of a batch of streams in one pipeline:
// XINFO CONSUMERS, the XPENDING summary and the first MaxPending (+1, to
// tell a cut) pending entries. A group or stream gone mid-read is dropped
// with a note.
func readGroups(ctx context.Context, c redis.UniversalClient, sp Space, opt Options, streams []State, rep *Report) error {
	pipe := c.Pipeline()
	cmds := make([][]groupCmds, len(streams))
	for i, st := range streams {
		for _, g := range st.Groups {
			key, name := string(st.Key), string(g.Name)
			cmds[i] = append(cmds[i], groupCmds{
				consumers: pipe.Do(ctx, "xinfo", "consumers", key, name),
				summary:   pipe.XPending(ctx, key, name),
				entries: pipe.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: key, Group: name,
					Start: "-", End: "+", Count: int64(opt.MaxPending) + 1}),
			})
		}
	}
	if pipe.Len() == 0 {
		return nil
	}
	if err := inspect.ExecPipe(ctx, pipe); err != nil {
		return err
	}
	for i := range streams {
		kept := streams[i].Groups[:0]
		for j, g := range streams[i].Groups {
			note, err := fillGroup(&g, cmds[i][j], sp, opt, rep.NowMs)
			if note != "" {
				rep.Notes = append(rep.Notes, note)
				continue
			}
			if err != nil {
				return err
			}
			kept = append(kept, g)
		}
		streams[i].Groups = kept
	}
	return nil
}

// fillGroup reads one group's replies into g: a note when the group or
// stream went away, an error when a command failed.
func fillGroup(g *GroupState, cmds groupCmds, sp Space, opt Options, nowMs int64) (string, error) {
	key, name := string(g.Stream), string(g.Name)
	for _, c := range []struct {
		cmd string
		err error
	}{{"XINFO", cmds.consumers.Err()}, {"XPENDING", cmds.summary.Err()}, {"XPENDING", cmds.entries.Err()}} {
		if note, gone := streamGone(key, name, c.err); gone {
			return note, nil
		}
		if c.err != nil && c.err != redis.Nil {
			return "", streamErr(c.cmd, key, c.err)
		}
	}
	g.ConsumerList, g.ConsumersCut = parseConsumers(cmds.consumers.Val(), opt.MaxConsumers)
	if sum, err := cmds.summary.Result(); err == nil {
		g.Summary = PendingSummary{Count: sum.Count, Smallest: sum.Lower, Largest: sum.Higher, PerConsumer: perConsumer(sum.Consumers, opt.MaxConsumers)}
	}
	ext, _ := cmds.entries.Result()
	if len(ext) > opt.MaxPending {
		ext, g.Truncated = ext[:opt.MaxPending], true
	}
	for _, x := range ext {
		e := PendingEntry{Stream: g.Stream, Group: g.Name, ID: x.ID, Consumer: inspect.Text(x.Consumer), Idle: Millis(x.Idle), Deliveries: x.RetryCount}
		sp.flag(&e)
		g.Stale += boolInt(e.Stale)
		g.Poison += boolInt(e.Poison)
		g.Entries = append(g.Entries, e)
	}
	if len(g.Entries) > 0 {
		g.Oldest = &g.Entries[0] // XPENDING lists by ID, the oldest first
		if ms, ok := IDMillis(g.Oldest.ID); ok && nowMs > 0 {
			age := Millis(time.Duration(max(nowMs-ms, 0)) * time.Millisecond)
			g.OldestAge = &age
		}
	}
	return "", nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// perConsumer is the summary's per-consumer counts, the most pending
// first, at most limit of them.
func perConsumer(m map[string]int64, limit int) []ConsumerCount {
	out := make([]ConsumerCount, 0, len(m))
	for n, c := range m {
		out = append(out, ConsumerCount{Name: inspect.Text(n), Pending: c})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Pending != out[j].Pending {
			return out[i].Pending > out[j].Pending
		}
		return out[i].Name < out[j].Name
	})
	return out[:min(len(out), limit)]
}

// parseConsumers reads XINFO CONSUMERS (RESP2 lists or RESP3 maps) into
// at most limit consumers (true when there were more); inactive is kept
// only where the server reports it.
func parseConsumers(v any, limit int) ([]ConsumerState, bool) {
	list, _ := v.([]any)
	out := []ConsumerState{}
	for _, item := range list {
		if len(out) >= limit {
			return out, true
		}
		f := replyFields(item)
		cs := ConsumerState{Name: inspect.Text(replyString(f["name"]))}
		cs.Pending, _ = f["pending"].(int64)
		idle, _ := f["idle"].(int64)
		cs.Idle = Millis(time.Duration(idle) * time.Millisecond)
		if in, ok := f["inactive"].(int64); ok && in >= 0 {
			m := Millis(time.Duration(in) * time.Millisecond)
			cs.Inactive = &m
		}
		out = append(out, cs)
	}
	return out, false
}

// replyFields reads a field/value reply: a RESP3 map or a RESP2 flat list.
func replyFields(v any) map[string]any {
	out := map[string]any{}
	switch r := v.(type) {
	case map[any]any:
		for k, val := range r {
			out[replyString(k)] = val
		}
	case []any:
		for i := 0; i+1 < len(r); i += 2 {
			out[replyString(r[i])] = r[i+1]
		}
	}
	return out
}

func replyString(v any) string {
	s, _ := v.(string)
	return s
}
