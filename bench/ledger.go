package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/idemctl/idemctl/inspect/ledger"
)

// LedgerResult is the ledger step: one untrimmed dedupe-ledger zset of
// LedgerMembers event IDs (scores 100 ms apart, so most lie past the 24h
// window) and `idemctl ledgers` timed on it, round by round, with the
// commands it sent as the server counted them.
type LedgerResult struct {
	Members    int64              `json:"members"`
	BuildTime  time.Duration      `json:"build_ns"`
	UsedMemory int64              `json:"redis_used_memory"` // after the build
	Runs       []Sample           `json:"runs"`
	Commands   int64              `json:"commands"` // server-counted calls of one run
	ByCommand  map[string]CmdStat `json:"by_command"`
	Reported   int64              `json:"reported_commands"` // what idemctl counted itself
	PastWindow int64              `json:"past_window"`
}

const (
	ledgerKey  = "bench:ledger:big"
	ledgerStep = 100 // ms between two members' scores
	// ledgerChunk members go in per EVAL: the server builds the zset
	// itself (ZADD of 1,000 members per call), no member crosses the wire.
	ledgerChunk = 1_000_000
)

// ledgerBuild adds members [from, to) scored now - i·ledgerStep ms.
const ledgerBuild = `
local key, from, to, now, step = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local args = {}
for i = from, to - 1 do
  args[#args + 1] = now - i * step
  args[#args + 1] = 'evt-' .. i
  if #args >= 2000 then redis.call('ZADD', key, unpack(args)); args = {} end
end
if #args > 0 then redis.call('ZADD', key, unpack(args)) end
return redis.call('ZCARD', key)`

// ledger builds the zset, times idemctl ledgers on it, and removes it.
func (h *harness) ledger(ctx context.Context) error {
	res := &LedgerResult{Members: int64(h.cfg.LedgerMembers)}
	h.res.Ledger = res
	now, err := h.client.Time(ctx).Result()
	if err != nil {
		return err
	}
	start := time.Now()
	for from := 0; from < h.cfg.LedgerMembers; from += ledgerChunk {
		to := min(from+ledgerChunk, h.cfg.LedgerMembers)
		if err := h.client.Eval(ctx, ledgerBuild, []string{ledgerKey}, from, to, now.UnixMilli(), ledgerStep).Err(); err != nil {
			return fmt.Errorf("ledger: building the zset: %w", err)
		}
	}
	res.BuildTime = time.Since(start)
	defer h.client.Unlink(context.WithoutCancel(ctx), ledgerKey)
	res.UsedMemory = usedMemory(ctx, h.client)
	h.cfg.logf("ledger: %d-member zset built in %v", h.cfg.LedgerMembers, res.BuildTime.Round(time.Millisecond))
	args := []string{"ledgers", "--url", h.srv.URL(0), "--preset", "zset-window", "--match", "bench:ledger:*", "-o", "json"}
	for range h.cfg.Rounds {
		h.waitQuiet(ctx)
		before := h.commandStats(ctx)
		var out bytes.Buffer
		s, err := h.runIdemctl(ctx, &out, args...)
		if err != nil {
			return fmt.Errorf("ledger: idemctl ledgers: %w", err)
		}
		res.ByCommand = diffStats(h.commandStats(ctx), before)
		if err := res.read(out.Bytes()); err != nil {
			return err
		}
		res.Runs = append(res.Runs, s)
	}
	return nil
}

// read checks one run's JSON against the zset and keeps its figures.
func (r *LedgerResult) read(out []byte) error {
	var reps []ledger.Report
	if err := json.Unmarshal(out, &reps); err != nil || len(reps) != 1 {
		return fmt.Errorf("ledger: idemctl ledgers -o json: %v\n%s", err, tail(string(out), 400))
	}
	if reps[0].Members != r.Members || reps[0].Keys != 1 {
		return fmt.Errorf("ledger: idemctl ledgers read %d members in %d keys, want %d in 1", reps[0].Members, reps[0].Keys, r.Members)
	}
	r.Reported, r.PastWindow, r.Commands = reps[0].Commands, reps[0].PastWindow, 0
	for _, st := range r.ByCommand {
		r.Commands += st.Calls
	}
	return nil
}

// markdownLedger is the ledger step's line.
func (r *Results) markdownLedger(p func(string, ...any)) {
	l := r.Ledger
	if l == nil || len(l.Runs) == 0 {
		return
	}
	var walls []time.Duration
	for _, s := range l.Runs {
		walls = append(walls, s.Wall)
	}
	p("\n### Dedupe ledger\n\n`idemctl ledgers` on one %d-member zset (built server-side in %.1f s, used_memory %.0f MB): median %s ms over %d run(s), %d commands counted by the server (%d by idemctl), %d entries past the 24h window.\n",
		l.Members, l.BuildTime.Seconds(), float64(l.UsedMemory)/1e6, ms(medianDur(walls)), len(walls), l.Commands, l.Reported, l.PastWindow)
}
