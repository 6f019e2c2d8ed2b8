// Package follow keeps a view of idempotency records live after one full
// pass: it learns which keys changed and re-reads only those, in batches,
// through the same record reader and classifier as a scan
// (inspect.ReadKeys), and turns processing records stale on time from a
// timer, with no read.
//
// How it learns (Mode, said in every Update):
//   - ModeTracking: CLIENT TRACKING ON BCAST PREFIX <each keyspace's
//     literal prefix>, on a RESP3 connection of its own per primary. No
//     server configuration; the ACL needs +client|tracking and +hello.
//   - ModeNotifications: PSUBSCRIBE __keyspace@N__:<prefix>*, where
//     tracking is refused and notify-keyspace-events is on.
//   - ModePeriodic: a full pass every Options.Interval, when neither is
//     possible (Update.Reason says why in one line).
//
// Never silently wrong: a watch connection lost or unanswered, a primary
// turned replica (failover), a FLUSHDB/FLUSHALL, a frame it cannot parse,
// a read that fails, or more changed keys waiting than Options.MaxPending
// mark the view not Live and start a re-sync: a full pass under the
// session's budget (Options.Scan), after which records the pass did not
// see are removed. Until KindResyncDone, Update.Live is false: a consumer
// must not report an all-clear from the view.
//
// Use: f := follow.New(c, keyspaces, opt); go f.Run(ctx, out); range over
// out. Updates are typed (KindUpsert, KindRemove, KindStale, KindResync,
// KindResyncDone, KindMode) and carry Was, what the view held for the
// key before, so a consumer can keep counts with no per-record memory
// of its own. The view itself keeps 8 bytes per record under an 8-byte
// hash of its key, not the key (25-38 bytes a record with the map's
// slack, measured at 1M), plus, for processing records only, the record
// until it turns stale; with Options.KeepKeys, each key as well. out is the only buffer
// towards the consumer: a slow consumer makes the changed keys wait,
// coalesced, up to MaxPending, then costs a re-sync, never memory.
//
// Floor 1 of ARCHITECTURE.md, the read engine: it may import inspect and
// the foundations (floor 0), never the write path, a screen or the
// command layer.
package follow
