package doctor

import (
	"fmt"
	"time"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/ledger"
	"github.com/idemctl/idemctl/internal/units"
)

// The ledger rules judge dedupe ledgers (ledger.ReadAll, handed in as
// Options.Ledgers): a trim that stopped, a window shorter than the retry
// horizon, period sets that never got their EXPIRE. With no ledger
// keyspace configured they leave no check at all.

// trimMargin: a zset ledger whose oldest entry is older than this many
// windows is not being trimmed (a trim on any schedule shorter than the
// window leaves entries at most twice its age).
const trimMargin = 2

// ledgerSamples bounds the keys a ledger finding names.
const ledgerSamples = 3

// perLedger runs fn on each ledger report of one shape ("" for all); a read
// that failed or was cut turns a quiet verdict into skipped.
func perLedger(id, shape string, fn func(in *input, l *ledger.Report, rep *Report) (status, reason string)) rule {
	return rule{id: id, run: func(in *input, rep *Report) {
		for i := range in.opt.Ledgers {
			l := &in.opt.Ledgers[i]
			if shape != "" && l.Shape != shape {
				continue
			}
			n := len(rep.Findings)
			status, reason := fn(in, l, rep)
			if len(rep.Findings) > n {
				continue
			}
			switch {
			case l.Err != "":
				status, reason = StatusSkipped, "the ledger could not be read: "+inspect.Line(l.Err)
			case l.Keys == 0:
				status, reason = StatusNoData, "no ledger key matches "+inspect.Sanitize(l.Match)
			case status == StatusOK && !l.Complete:
				status, reason = StatusSkipped, "the read of this ledger was cut short: nothing found in part of it proves nothing"
			}
			rep.check(id, l.Name, status, reason)
		}
	}}
}

// ruleLedgerTrim: the oldest entry of a zset ledger is far older than the
// window, so ZREMRANGEBYSCORE is not running and the zset grows unbounded.
func ruleLedgerTrim(_ *input, l *ledger.Report, rep *Report) (string, string) {
	var late []ledger.Key
	var past int64
	for _, k := range l.Details { // oldest first
		if k.AgeKnown && k.OldestAgeMs > trimMargin*l.WindowMs {
			late = append(late, k)
			past += k.PastWindow
		}
	}
	if len(late) == 0 {
		return StatusOK, ""
	}
	worst := late[0]
	sev := Warning
	if worst.OldestAgeMs > 10*l.WindowMs {
		sev = Critical
	}
	key := inspect.Sanitize(worst.Key)
	whose := "their oldest entries are"
	if len(late) == 1 {
		whose = "its oldest entries are"
	}
	rep.add(Finding{Rule: "ledger-trim", Severity: sev, Keyspace: l.Name,
		Title: fmt.Sprintf("%s not being trimmed: %s far older than the %s window", units.Nouns(int64(len(late)), "ledger zset is", "ledger zsets are"), whose, dur(l.WindowMs)),
		Evidence: []string{
			fmt.Sprintf("%s: oldest entry %s old, window %s, %s of %s entries past the window", key, dur(worst.OldestAgeMs), dur(l.WindowMs), count(worst.PastWindow), count(worst.Members)),
			fmt.Sprintf("%s past the window in %s, %s", units.Nouns(past, "entry", "entries"), units.Nouns(int64(len(late)), "untrimmed zset", "untrimmed zsets"), units.FormatBytes(l.MemoryBytes)+" in the ledger"),
		},
		Figures: map[string]int64{"keys": int64(len(late)), "oldest_age_ms": worst.OldestAgeMs, "window_ms": l.WindowMs, "past_window": past},
		Samples: ledgerKeys(late),
		Fix: fmt.Sprintf("find why the trim job stopped and run it on a schedule shorter than the window: ZREMRANGEBYSCORE <key> -inf (<now - %s in the score's unit>; for %s now: ZREMRANGEBYSCORE %s -inf (%s",
			cfg(time.Duration(l.WindowMs)*time.Millisecond), key, key, trimCutoff(l)),
	})
	return "", ""
}

// trimCutoff is the score below which an entry is past the window at the
// server's time of the read, in the ledger's score unit.
func trimCutoff(l *ledger.Report) string {
	ms := l.NowMs - l.WindowMs
	if l.ScoreUnit == ledger.ScoreSeconds {
		return fmt.Sprint(ms / 1000)
	}
	return fmt.Sprint(ms)
}

// ruleLedgerWindow: a window shorter than how long a producer redelivers
// lets a late redelivery through as a new event.
func ruleLedgerWindow(in *input, l *ledger.Report, rep *Report) (string, string) {
	h := in.opt.RetryHorizon.Milliseconds()
	if l.WindowMs >= h {
		return StatusOK, ""
	}
	rep.add(Finding{Rule: "ledger-window", Severity: Warning, Keyspace: l.Name,
		Title:    fmt.Sprintf("the ledger keeps event IDs %s, less than the %s retry horizon: a later redelivery is processed twice", dur(l.WindowMs), dur(h)),
		Evidence: []string{fmt.Sprintf("window %s, retry horizon %s (--retry-horizon)", dur(l.WindowMs), dur(h))},
		Figures:  map[string]int64{"window_ms": l.WindowMs, "retry_horizon_ms": h},
		Fix: fmt.Sprintf("keep entries at least as long as the producer redelivers: window: %s under keyspaces.%s in the config, and the same in the trim job or EXPIRE",
			cfg(in.opt.RetryHorizon), inspect.Sanitize(l.Name)),
	})
	return "", ""
}

// ruleLedgerNoTTL: a period set that never got its EXPIRE lives forever.
func ruleLedgerNoTTL(_ *input, l *ledger.Report, rep *Report) (string, string) {
	if l.NoTTL == 0 {
		return StatusOK, ""
	}
	var none []ledger.Key
	var members int64
	for _, k := range l.Details {
		if k.TTLms == -1 {
			none = append(none, k)
			members += k.Members
		}
	}
	sev := Warning
	if len(none) > 0 && none[0].PastWindow > 0 {
		sev = Critical // one already outlived its window: it will never go
	}
	ev := []string{fmt.Sprintf("%s of %s period sets have no TTL (PTTL -1), %s event IDs among those listed", count(l.NoTTL), count(l.Keys), count(members))}
	if len(none) > 0 {
		ev = append(ev, fmt.Sprintf("%s: period %s, %s old, window %s", inspect.Sanitize(none[0].Key), inspect.Sanitize(none[0].Period), dur(none[0].OldestAgeMs), dur(l.WindowMs)))
	}
	rep.add(Finding{Rule: "ledger-no-ttl", Severity: sev, Keyspace: l.Name,
		Title:    fmt.Sprintf("%s period sets never got their EXPIRE: they live forever", count(l.NoTTL)),
		Evidence: ev, Figures: map[string]int64{"keys": l.NoTTL, "window_ms": l.WindowMs}, Samples: ledgerKeys(none),
		Fix: fmt.Sprintf("send EXPIRE with every SADD (in one MULTI, or EXPIRE key %d NX after it); repair these with EXPIRE <key> <seconds left of the window>, or DEL once their period is past the window",
			l.WindowMs/1000),
	})
	return "", ""
}

func ledgerKeys(ks []ledger.Key) []string {
	var out []string
	for _, k := range ks[:min(len(ks), ledgerSamples)] {
		out = append(out, inspect.Sanitize(k.Key))
	}
	return out
}
