package verify

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// Entry is a stream's pending entry as a hook sees it: where it is, who
// holds it, and its fields (each cut to the read cap by the caller).
type Entry struct {
	Stream, Group, ID, Consumer string
	Deliveries                  int64
	Fields                      map[string]string
}

// CheckEntry validates a hook for a stream keyspace. Its placeholders are
// the entry's builtins and field names, which only the entry knows: a
// field the entry lacks makes that entry's verdict unknown, not the config
// wrong.
func (h Hook) CheckEntry() error { return h.spec().CheckEntry() }

// VerifyEntry runs the hook for one pending entry. As for records, any
// failure (a missing field, the hook's own) is an unknown verdict with the
// reason, never an error.
func (h Hook) VerifyEntry(ctx context.Context, e *Entry) Result {
	start := time.Now()
	r := h.verifyEntry(ctx, e)
	r.Took = time.Since(start)
	return r
}

func (h Hook) verifyEntry(ctx context.Context, e *Entry) Result {
	if len(h.Command) == 0 {
		return unknown("stream keyspace has no verify hook (keyspaces[].verify in the config)")
	}
	argv, err := h.fill(func(name string) (string, error) {
		switch name {
		case "stream":
			return e.Stream, nil
		case "group":
			return e.Group, nil
		case "id":
			return e.ID, nil
		case "consumer":
			return e.Consumer, nil
		case "deliveries":
			return strconv.FormatInt(e.Deliveries, 10), nil
		}
		v, ok := e.Fields[name]
		if !ok {
			return "", fmt.Errorf("entry %s has no field %q", e.ID, name)
		}
		return v, nil
	})
	if err != nil {
		return unknown("the hook was not run: %v", err)
	}
	return h.run(ctx, argv)
}
