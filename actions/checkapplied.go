package actions

import (
	"context"
	"sort"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
)

// What CheckApplied finds of an applied write.
const (
	CheckKept    = "kept"    // the record is exactly as the write left it
	CheckLost    = "lost"    // exactly as before the write: taken back (a failover, a restore)
	CheckChanged = "changed" // written again since, by the application or someone
	CheckGone    = "gone"    // the key no longer exists (expired or deleted since)
	CheckUnknown = "unknown" // it cannot be told: the detail says why
)

// AppliedCheck is one applied write from the audit log against the record
// as it is now.
type AppliedCheck struct {
	AuditID  string     `json:"audit_id"`
	Run      string     `json:"run,omitempty"`
	Time     string     `json:"time"`
	Key      string     `json:"key"`
	Keyspace string     `json:"keyspace"`
	Action   write.Kind `json:"action"`
	Reason   string     `json:"reason"`
	Status   string     `json:"status"`
	Detail   string     `json:"detail,omitempty"`
	// NotReplicated: the run already reported the write not acknowledged
	// by the replicas.
	NotReplicated bool `json:"not_replicated,omitempty"`
	// Entry names a pending-entry write's entry (Key is then its stream).
	Entry *EntryTarget `json:"entry,omitempty"`
	// Intent is the write as the log holds it (for the re-apply command).
	Intent audit.Entry `json:"-"`
}

// LatestApplied lists, newest first, the last applied write of each key
// (or pending entry) among the log's writes that keep accepts: an earlier
// write of a key was superseded by the later one, and is not what the
// record should be.
func (x *UndoIndex) LatestApplied(keep func(in audit.Entry) bool) []UndoTarget {
	seen := map[string]bool{}
	var out []UndoTarget
	for i := len(x.order) - 1; i >= 0; i-- {
		in := x.intents[x.order[i]]
		key := auditTarget(in)
		if seen[key] {
			continue
		}
		seen[key] = true
		if o := x.outcomes[in.ID]; o.Outcome == write.Applied && keep(in) {
			out = append(out, UndoTarget{Intent: in, Outcome: o})
		}
	}
	return out
}

// SinceFilter keeps writes at or after t (the zero time: all).
func SinceFilter(t time.Time) func(audit.Entry) bool {
	return func(in audit.Entry) bool {
		at, err := time.Parse(time.RFC3339Nano, in.Time)
		return t.IsZero() || err == nil && !at.Before(t)
	}
}

// CheckApplied reads each target's record as it is now (its version: one
// script, nothing fetched but digests) and says whether the write stands.
// A failover that lost the write leaves the record exactly as the write
// found it, which the log's before-image tells apart from a record the
// application wrote again since.
func CheckApplied(ctx context.Context, c redis.UniversalClient, ts []UndoTarget, kss []*inspect.Keyspace) []AppliedCheck {
	out := make([]AppliedCheck, 0, len(ts))
	for _, t := range ts {
		in, o := t.Intent, t.Outcome
		ch := AppliedCheck{AuditID: in.ID, Run: in.Run, Time: in.Time, Key: in.ExactKey(), Keyspace: in.Keyspace, Action: in.Action,
			Reason: in.Reason, NotReplicated: o.Replication != nil && o.NotReplicated, Intent: in}
		if ea := in.Entry; ea != nil {
			ch.Entry = &EntryTarget{Stream: string(ea.Stream), Group: string(ea.Group), ID: ea.ID}
			ch.Status, ch.Detail = checkEntry(ctx, c, t)
		} else {
			ch.Status, ch.Detail = checkOne(ctx, c, t, keyspaceNamed(kss, in.Keyspace, ch.Key))
		}
		out = append(out, ch)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time < out[j].Time })
	return out
}

func checkOne(ctx context.Context, c redis.UniversalClient, t UndoTarget, ks *inspect.Keyspace) (string, string) {
	in, o := t.Intent, t.Outcome
	if o.AfterVersion == nil {
		return CheckUnknown, "the log does not say what the write left (its outcome was settled by a re-read)"
	}
	comp := ""
	if ks != nil {
		isLock := false
		if lk := ks.Schema.Lock; lk != nil {
			_, isLock = lk.RecordKey(in.ExactKey())
		}
		comp = companionKey(ks, in.ExactKey(), isLock)
	}
	cur, err := fetchVersion(ctx, c, in.ExactKey(), comp)
	if err != nil {
		return CheckUnknown, "the record could not be read: " + explain(err, "")
	}
	after := *o.AfterVersion
	switch {
	case cur == after:
		return CheckKept, ""
	case in.Image != nil && cur == in.Image.Version:
		return CheckLost, "the record is exactly as it was before this write: the write was taken back (a failover to a replica that never had it, or a restore)"
	case cur.Type == "none":
		return CheckGone, "the key no longer exists: it expired or was deleted since"
	case in.Image == nil:
		return CheckChanged, "the record is not as the write left it; the log holds no before-image to tell a lost write from a later one"
	}
	return CheckChanged, "the record was written again since the write (by the application, or someone): nothing to re-apply"
}
