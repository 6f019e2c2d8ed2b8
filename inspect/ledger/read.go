package ledger

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/topology"
)

// Options bound a ledger read.
type Options struct {
	Count   int   // SCAN COUNT, also keys per pipeline (0: ScanCount)
	MaxKeys int64 // stop after this many ledger keys per ledger (0: all)
}

// ScanCount is the default SCAN COUNT of a ledger read: ledger keys
// are few and big, so a page is mostly keys that are not ledgers.
const ScanCount = 1000

// ReadAll reads each ledger keyspace in turn; an error ends the read
// and comes back with the reports read so far (the failed one included,
// incomplete, with its error).
func ReadAll(ctx context.Context, c redis.UniversalClient, ls []*Ledger, opt Options) ([]Report, error) {
	var out []Report
	for _, l := range ls {
		r, err := Read(ctx, c, l, opt)
		out = append(out, r)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// Read finds a ledger's keys by SCAN MATCH TYPE on every primary and
// reads each in O(log n) commands: never a member list, whatever its size.
func Read(ctx context.Context, c redis.UniversalClient, l *Ledger, opt Options) (Report, error) {
	rep := newReport(l)
	if opt.Count <= 0 {
		opt.Count = ScanCount
	}
	nodes, err := topology.Primaries(ctx, c)
	if err != nil {
		rep.Err = err.Error()
		return rep, err
	}
	rep.Nodes = len(nodes)
	rep.Complete = true
	for _, n := range nodes {
		done, err := readLedgerNode(ctx, n.Client, l, opt, &rep)
		if err != nil {
			rep.Complete, rep.Err = false, fmt.Sprintf("%s: %v", n.Addr, err)
			rep.trimDetails()
			return rep, fmt.Errorf("ledger %s on %s: %w", l.Name, n.Addr, err)
		}
		rep.Complete = rep.Complete && done
	}
	rep.trimDetails()
	return rep, nil
}

// readLedgerNode walks one node: each page's SCAN rides with a TIME (the
// "now" its keys are judged at), then one pipeline reads the page's keys.
// done is false when MaxKeys cut the walk.
func readLedgerNode(ctx context.Context, c redis.UniversalClient, l *Ledger, opt Options, rep *Report) (done bool, err error) {
	var cursor uint64
	for {
		pipe := c.Pipeline()
		timeCmd := pipe.Time(ctx)
		scan := pipe.ScanType(ctx, cursor, l.Match, int64(opt.Count), l.redisType())
		nowMs, err := inspect.ExecTimed(ctx, pipe, timeCmd)
		rep.Commands += 2
		if err != nil {
			return false, err
		}
		keys, next, err := scan.Result()
		if err != nil {
			return false, fmt.Errorf("SCAN: %w", err)
		}
		cut := opt.MaxKeys > 0 && rep.Keys+int64(len(keys)) > opt.MaxKeys
		if cut {
			keys = keys[:max(opt.MaxKeys-rep.Keys, 0)]
		}
		if len(keys) > 0 {
			if err := readLedgerKeys(ctx, c, l, keys, nowMs, rep); err != nil {
				return false, err
			}
		}
		rep.NowMs = nowMs
		if opt.MaxKeys > 0 && rep.Keys >= opt.MaxKeys {
			return next == 0 && !cut, nil
		}
		if cursor = next; cursor == 0 {
			return true, nil
		}
	}
}

// ledgerCmds are one key's queued commands.
type ledgerCmds struct {
	card, mem, ttl *redis.IntCmd
	oldest, newest *redis.ZSliceCmd // zset: ZRANGE 0 0 / -1 -1 WITHSCORES
	past           *redis.IntCmd
	bands          [len(Bands)]*redis.IntCmd
}

// readLedgerKeys reads one page of keys in one pipeline and folds them in.
func readLedgerKeys(ctx context.Context, c redis.UniversalClient, l *Ledger, keys []string, nowMs int64, rep *Report) error {
	pipe := c.Pipeline()
	cmds := make([]ledgerCmds, len(keys))
	for i, k := range keys {
		cmds[i] = queueLedgerKey(ctx, pipe, l, k, nowMs)
	}
	rep.Commands += int64(pipe.Len())
	if err := inspect.ExecPipe(ctx, pipe); err != nil {
		return err
	}
	for i, k := range keys {
		if cmds[i].card.Val() == 0 {
			continue // gone since SCAN returned it
		}
		rep.add(cmds[i].key(l, k, nowMs))
	}
	return nil
}

func queueLedgerKey(ctx context.Context, pipe redis.Pipeliner, l *Ledger, key string, nowMs int64) ledgerCmds {
	var q ledgerCmds
	if l.Shape == SetPerPeriod {
		q.card = pipe.SCard(ctx, key)
	} else {
		q.card = pipe.ZCard(ctx, key)
	}
	q.mem = pipe.MemoryUsage(ctx, key, inspect.MemorySamples)
	q.ttl = redis.NewIntCmd(ctx, "pttl", key)
	_ = pipe.Process(ctx, q.ttl)
	if l.Shape == SetPerPeriod {
		return q
	}
	q.oldest = pipe.ZRangeWithScores(ctx, key, 0, 0)
	q.newest = pipe.ZRangeWithScores(ctx, key, -1, -1)
	q.past = zcountBelow(ctx, pipe, key, l.scoreAt(nowMs-l.Window.Milliseconds()))
	for i, w := range Bands {
		q.bands[i] = zcountBelow(ctx, pipe, key, l.scoreAt(nowMs-w*l.Window.Milliseconds()))
	}
	return q
}

// zcountBelow queues ZCOUNT key -inf (cutoff: the entries scored before it.
func zcountBelow(ctx context.Context, pipe redis.Pipeliner, key string, cutoff float64) *redis.IntCmd {
	return pipe.ZCount(ctx, key, "-inf", "("+strconv.FormatFloat(cutoff, 'f', -1, 64))
}

// Epoch times a zset score may hold: from 2000 to a day past the server's
// clock. Anything else is a counter or a hash, not a processing time.
const (
	minLedgerMs = 946_684_800_000
	aheadMs     = 24 * 3600 * 1000
)

// key turns one key's answers into its Key at the server's nowMs.
func (q *ledgerCmds) key(l *Ledger, key string, nowMs int64) Key {
	k := Key{Key: key, Type: l.redisType(), Members: q.card.Val(), MemoryBytes: -1, TTLms: -1}
	if v, err := q.mem.Result(); err == nil {
		k.MemoryBytes = v
	}
	if v, err := q.ttl.Result(); err == nil && v >= 0 {
		k.TTLms = v
	}
	if l.Shape == SetPerPeriod {
		k.setAges(l, nowMs)
		return k
	}
	oldest, e1 := q.oldest.Result()
	newest, e2 := q.newest.Result()
	if e1 != nil || e2 != nil || len(oldest) == 0 || len(newest) == 0 {
		return k
	}
	lo, hi := l.msOfScore(oldest[0].Score), l.msOfScore(newest[0].Score)
	if lo < minLedgerMs || hi > nowMs+aheadMs {
		k.NotTimes = true
		return k
	}
	k.AgeKnown = true
	k.OldestAgeMs, k.NewestAgeMs = max(nowMs-lo, 0), max(nowMs-hi, 0)
	k.PastWindow = q.past.Val()
	for i := range q.bands {
		k.OlderThan[i] = q.bands[i].Val()
	}
	return k
}

// setAges dates a period set from its name: its entries were added between
// the period's start and end, and the whole set is past the window once
// the period started longer than a window ago.
func (k *Key) setAges(l *Ledger, nowMs int64) {
	start, end, value, ok := l.periodOf(k.Key)
	k.Period = value
	if !ok {
		return
	}
	k.AgeKnown = true
	k.OldestAgeMs = max(nowMs-start.UnixMilli(), 0)
	k.NewestAgeMs = max(nowMs-end.UnixMilli(), 0)
	win := l.Window.Milliseconds()
	if k.OldestAgeMs > win {
		k.PastWindow = k.Members
	}
	for i, w := range Bands {
		if k.OldestAgeMs > w*win {
			k.OlderThan[i] = k.Members
		}
	}
}
