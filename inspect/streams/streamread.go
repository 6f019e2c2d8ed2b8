package streams

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/topology"
)

// Options bounds a stream read.
type Options struct {
	MaxStreams   int // streams read at most, over all nodes (default 10000); Limited says when reached
	MaxPending   int // pending entries read per group (default 1000); Truncated says when more
	MaxConsumers int // consumers kept per group (default 100)
	Batch        int // streams per pipeline (default 100)
}

// Stream read limits.
const (
	DefaultMaxStreams   = 10_000
	DefaultMaxPending   = 1000
	MaxStreamPending    = 100_000
	DefaultMaxConsumers = 100
	streamScanCount     = 1000
)

func (o Options) withDefaults() Options {
	if o.MaxStreams <= 0 {
		o.MaxStreams = DefaultMaxStreams
	}
	if o.MaxPending <= 0 {
		o.MaxPending = DefaultMaxPending
	}
	o.MaxPending = min(o.MaxPending, MaxStreamPending)
	if o.MaxConsumers <= 0 {
		o.MaxConsumers = DefaultMaxConsumers
	}
	if o.Batch <= 0 {
		o.Batch = 100
	}
	return o
}

// Report is one stream keyspace as read: its streams (sorted by
// key), each with its consumer groups.
type Report struct {
	Space   string       `json:"keyspace"`
	Match   inspect.Text `json:"match"`
	Streams []State      `json:"streams"`
	Limited bool         `json:"limited"`         // MaxStreams reached: more streams may match
	Notes   []string     `json:"notes,omitempty"` // keys skipped or groups gone mid-read, one sanitized line each
	NowMs   int64        `json:"server_time_ms"`  // the server's clock the ages are from
}

// State is one stream and the groups read on it.
type State struct {
	Key    inspect.Text `json:"stream"`
	Node   string       `json:"node"`
	Groups []GroupState `json:"groups"`
}

// Read reads one stream keyspace on every primary: SCAN … TYPE
// stream for its streams, then per batch of streams one pipeline of XINFO
// GROUPS and one of each group's consumers and pending entries.
func Read(ctx context.Context, c redis.UniversalClient, sp Space, opt Options) (Report, error) {
	sp, opt = sp.WithDefaults(), opt.withDefaults()
	rep := Report{Space: sp.Name, Match: inspect.Text(sp.Match), Streams: []State{}}
	nodes, err := topology.Primaries(ctx, c)
	if err != nil {
		return rep, err
	}
	for _, n := range nodes {
		keys, limited, err := findStreams(ctx, n.Client, sp.Match, opt.MaxStreams-len(rep.Streams))
		if err != nil {
			return rep, err
		}
		rep.Limited = rep.Limited || limited
		for start := 0; start < len(keys); start += opt.Batch {
			batch := keys[start:min(start+opt.Batch, len(keys))]
			if err := readStreamBatch(ctx, n, sp, opt, batch, &rep); err != nil {
				return rep, err
			}
		}
		if rep.Limited {
			break
		}
	}
	sort.Slice(rep.Streams, func(i, j int) bool { return rep.Streams[i].Key < rep.Streams[j].Key })
	return rep, nil
}

// findStreams walks one node's keyspace for streams, up to limit of them
// (true when it stopped there), each once.
func findStreams(ctx context.Context, c redis.UniversalClient, match string, limit int) ([]string, bool, error) {
	seen := map[string]bool{}
	var out []string
	var cursor uint64
	for {
		keys, next, err := c.ScanType(ctx, cursor, match, streamScanCount, "stream").Result()
		if err != nil {
			return out, false, streamErr("SCAN", "", err)
		}
		for _, k := range keys {
			if seen[k] {
				continue
			}
			if len(out) >= limit {
				return out, true, nil
			}
			seen[k] = true
			out = append(out, k)
		}
		if cursor = next; cursor == 0 {
			return out, false, nil
		}
	}
}

// readStreamBatch reads a batch of one node's streams: the server's clock
// and each stream's groups, then the groups' consumers and pending entries.
func readStreamBatch(ctx context.Context, n topology.Primary, sp Space, opt Options, keys []string, rep *Report) error {
	pipe := n.Client.Pipeline()
	timeCmd := pipe.Time(ctx)
	infos := make([]*redis.XInfoGroupsCmd, len(keys))
	for i, k := range keys {
		infos[i] = pipe.XInfoGroups(ctx, k)
	}
	nowMs, err := inspect.ExecTimed(ctx, pipe, timeCmd)
	if err != nil {
		return err
	}
	rep.NowMs = nowMs
	var streams []State
	for i, k := range keys {
		groups, err := infos[i].Result()
		if note, skip := streamGone(k, "", err); skip {
			rep.Notes = append(rep.Notes, note)
			continue
		} else if err != nil {
			return streamErr("XINFO", k, err)
		}
		st := State{Key: inspect.Text(k), Node: n.Addr, Groups: []GroupState{}}
		for _, g := range groups {
			if sp.wants(g.Name) {
				st.Groups = append(st.Groups, newGroupState(k, g))
			}
		}
		streams = append(streams, st)
	}
	if err := readGroups(ctx, n.Client, sp, opt, streams, rep); err != nil {
		return err
	}
	rep.Streams = append(rep.Streams, streams...)
	return nil
}

// streamGone tells a reply meaning the key or group went away mid-read
// (deleted, or replaced by another type) from a real failure: skip it,
// with a note saying why.
func streamGone(key, group string, err error) (string, bool) {
	if err == nil {
		return "", false
	}
	what := "stream " + inspect.Sanitize(key)
	if group != "" {
		what = "group " + inspect.Sanitize(group) + " of " + what
	}
	msg := err.Error()
	switch {
	case isWrongType(err):
		return "skipped " + what + ": the key is no longer a stream", true
	case strings.HasPrefix(msg, "NOGROUP"):
		return "skipped " + what + ": the group was deleted while it was read", true
	case strings.Contains(msg, "no such key"):
		return "skipped " + what + ": the key was deleted while it was read", true
	}
	return "", false
}

// streamErr says a failed command in the user's terms: an ACL refusal
// names the command to grant.
func streamErr(cmd, key string, err error) error {
	if !isServerErr(err) {
		return err
	}
	msg := inspect.Line(err.Error())
	if strings.HasPrefix(msg, "NOPERM") && strings.Contains(msg, "key") {
		return fmt.Errorf("the server's ACL does not let this user read stream %s (%s): %s", inspect.Sanitize(key), cmd, msg)
	}
	if strings.HasPrefix(msg, "NOPERM") {
		return fmt.Errorf("the server's ACL does not let this user run %s (grant +%s): %s", cmd, strings.ToLower(cmd), msg)
	}
	if key != "" {
		return fmt.Errorf("%s %s: %s", cmd, inspect.Sanitize(key), msg)
	}
	return fmt.Errorf("%s: %s", cmd, msg)
}

// isServerErr reports a server's error answer, as opposed to a broken
// connection or a cancelled context. It and the two tests below are
// inspect's, copied: one line each, not worth an engine API.
func isServerErr(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && !errors.Is(err, context.Canceled)
}

func isWrongType(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "WRONGTYPE")
}

func isNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}
