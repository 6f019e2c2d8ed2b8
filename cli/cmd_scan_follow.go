package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/filter"
	"github.com/idemctl/idemctl/inspect/follow"
)

// checkFollow says why --follow cannot be taken as given ("" it can).
func (o *scanCmd) checkFollow(format string) error {
	if !o.follow {
		if o.followMode != "" {
			return usageErr("--follow-mode needs --follow")
		}
		return nil
	}
	switch {
	case format != "ndjson":
		return usageErr("--follow streams NDJSON: add -o ndjson")
	case o.readFlags.snap.path != "":
		return usageErr("--follow follows a live server; a snapshot (--rdb) does not change")
	case o.limit > 0:
		return usageErr("--follow runs until interrupted; drop --limit")
	}
	if _, ok := follow.ParseMode(orDefault(o.followMode, "auto")); !ok {
		return usageErr("--follow-mode %q: want auto, tracking, notifications or periodic", o.followMode)
	}
	return nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// runFollow streams the session's records as they change, one JSON
// object a line with its "event", until ctx ends (Ctrl-C).
func (o *scanCmd) runFollow(ctx context.Context, a *app, s *session, filter filter.Filter) error {
	mode, _ := follow.ParseMode(orDefault(o.followMode, "auto"))
	f := follow.New(s.client, s.keyspaces, follow.Options{Scan: s.scan, Mode: mode, KeepKeys: true})
	out := make(chan follow.Update, 1024)
	errc := make(chan error, 1)
	go func() { errc <- f.Run(ctx, out) }()
	w := bufio.NewWriterSize(a.stdout, 64<<10)
	var buf []byte
	for u := range out {
		buf = appendFollowLine(buf[:0], u, &filter)
		if buf == nil {
			continue
		}
		w.Write(buf)
		if len(out) == 0 { // flush when caught up: a script sees each change at once
			if err := w.Flush(); err != nil {
				return fmt.Errorf("writing output: %w", err)
			}
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	if err := <-errc; err != nil {
		return err
	}
	return context.Canceled
}

// followLine is an NDJSON line of --follow other than a record's.
type followLine struct {
	Event    string `json:"event"`
	Mode     string `json:"mode"`
	Live     bool   `json:"live"`
	Key      string `json:"key,omitempty"`
	Keyspace string `json:"keyspace,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Records  *int   `json:"records,omitempty"`
}

// appendFollowLine is u's line (nil: none). A record the filter rejects
// whose key the view held is "unmatched", so a script drops it.
func appendFollowLine(b []byte, u follow.Update, filter *filter.Filter) []byte {
	l := followLine{Event: u.Kind.String(), Mode: u.Mode.String(), Live: u.Live, Key: u.Key, Reason: inspect.Line(u.Reason)}
	if u.Keyspace != nil {
		l.Keyspace = u.Keyspace.Name
	}
	switch u.Kind {
	case follow.KindUpsert, follow.KindStale:
		if !filter.Match(&u.Record) {
			if !u.Was.Known {
				return nil
			}
			l.Event = "unmatched"
			break
		}
		b = fmt.Appendf(b, `{"event":%q,"mode":%q,"live":%t,"record":`, map[follow.Kind]string{follow.KindUpsert: "record", follow.KindStale: "stale"}[u.Kind], l.Mode, l.Live)
		b = inspect.AppendJSON(b, &u.Record)
		return append(b, "}\n"...)
	case follow.KindResyncDone:
		l.Records = &u.Records
	}
	j, err := json.Marshal(l)
	if err != nil {
		return nil
	}
	return append(append(b, j...), '\n')
}
