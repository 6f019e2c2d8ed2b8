package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// SnapshotResult is the offline step: the bench keyspace saved (SAVE) and
// read from the file by stats --rdb and by redis-check-rdb, round by
// round.
type SnapshotResult struct {
	File      string   `json:"file"`
	Bytes     int64    `json:"bytes"`
	SaveTime  int64    `json:"save_ns"`
	Stats     []Sample `json:"stats_rdb"`
	CheckRDB  []Sample `json:"redis_check_rdb"`
	LiveStats []Sample `json:"live_stats"` // stats --url on the same keyspace, for its RSS
	CheckTool string   `json:"redis_check_rdb_path"`
	Skipped   string   `json:"skipped,omitempty"`
}

func (s *SnapshotResult) medians() (stats, check time.Duration, rssKB, liveKB int64) {
	var st, ck, rss, live []time.Duration
	for _, x := range s.Stats {
		st, rss = append(st, x.Wall), append(rss, time.Duration(x.MaxRSSKB))
	}
	for _, x := range s.CheckRDB {
		ck = append(ck, x.Wall)
	}
	for _, x := range s.LiveStats {
		live = append(live, time.Duration(x.MaxRSSKB))
	}
	return medianDur(st), medianDur(ck), int64(medianDur(rss)), int64(medianDur(live))
}

// snapshot saves the keyspace and times, each round, stats --rdb on the
// file against redis-check-rdb on the same file (it parses every value
// and builds nothing; stats parses what records need).
func (h *harness) snapshot(ctx context.Context) error {
	res := &SnapshotResult{}
	h.res.Snapshot = res
	tool, err := exec.LookPath("redis-check-rdb")
	if err != nil {
		res.Skipped = "redis-check-rdb not found (apt-get install -y redis-server, or redis-tools on newer Debian)"
		return nil
	}
	res.CheckTool = tool
	slow := h.slowClient()
	defer slow.Close()
	start := time.Now()
	if err := slow.Save(ctx).Err(); err != nil {
		return fmt.Errorf("SAVE: %w", err)
	}
	res.SaveTime = int64(time.Since(start))
	name, err := slow.ConfigGet(ctx, "dbfilename").Result()
	if err != nil {
		return err
	}
	res.File = filepath.Join(h.srv.Dir, name["dbfilename"])
	fi, err := os.Stat(res.File)
	if err != nil {
		return err
	}
	res.Bytes = fi.Size()
	args := []string{"stats", "--rdb", res.File, "--preset", "atlasmart", "--reserve-ttl", reserveTTL.String(),
		"--processing-timeout", processingTimeout.String(), "--retention", retention.String(), "--output", "json"}
	for round := range h.cfg.Rounds {
		h.waitQuiet(ctx)
		s, err := h.runIdemctl(ctx, nil, args...)
		if err != nil {
			return fmt.Errorf("stats --rdb: %w", err)
		}
		s.Keys = int64(h.cfg.N)
		res.Stats = append(res.Stats, s)
		h.waitQuiet(ctx)
		c, err := h.runTool(ctx, nil, tool, res.File)
		if err != nil {
			return fmt.Errorf("redis-check-rdb: %w", err)
		}
		res.CheckRDB = append(res.CheckRDB, c)
		h.waitQuiet(ctx)
		l, err := h.runIdemctl(ctx, nil, h.idemctlArgs("stats", "--output", "json")...)
		if err != nil {
			return fmt.Errorf("live stats: %w", err)
		}
		res.LiveStats = append(res.LiveStats, l)
		h.cfg.logf("snapshot round %d: stats --rdb %v (%.0f MB), redis-check-rdb %v", round+1,
			s.Wall.Round(time.Millisecond), mb(s.MaxRSSKB), c.Wall.Round(time.Millisecond))
	}
	return nil
}

// evaluateSnapshot checks the offline targets: no slower than
// redis-check-rdb, a million records a second, the RSS of live stats.
func (r *Results) evaluateSnapshot(add func(Target)) {
	ratioT := Target{Name: "stats --rdb vs redis-check-rdb on the same dump", Want: "≤ 1.0 × its time", Got: "not measured (-snapshot)"}
	rate := Target{Name: "stats --rdb records/s", Want: "≥ 1,000,000 records/s", Got: "not measured (-snapshot)"}
	rss := Target{Name: "stats --rdb peak RSS vs live stats", Want: "within 10 %", Got: "not measured (-snapshot)"}
	s := r.Snapshot
	switch {
	case s != nil && s.Skipped != "":
		ratioT.Got, rate.Got, rss.Got = "skipped: "+s.Skipped, "skipped", "skipped"
	case s != nil && len(s.Stats) > 0:
		st, ck, kb, lr := s.medians()
		x := ratio(st, ck)
		ratioT.Got = fmt.Sprintf("%.2f × (%v vs %v on a %.0f MB dump)", x, st.Round(time.Millisecond), ck.Round(time.Millisecond), float64(s.Bytes)/1e6)
		ratioT.Met, ratioT.Measured = x <= 1.0, r.N >= 1_000_000
		perSec := float64(r.N) / st.Seconds()
		rate.Got = fmt.Sprintf("%.0f records/s", perSec)
		rate.Met, rate.Measured = perSec >= 1e6, r.N >= 1_000_000
		rss.Got = fmt.Sprintf("%.1f MB", mb(kb))
		if lr > 0 {
			rss.Got += fmt.Sprintf(" vs %.1f MB live (%+.0f %%)", mb(lr), (float64(kb)/float64(lr)-1)*100)
			rss.Met, rss.Measured = float64(kb) <= 1.1*float64(lr), r.N >= 1_000_000 // not above it by more than 10 %
		}
		if r.N < 1_000_000 {
			ratioT.Note = "the targets are on a 1M-record dump (-n 1000000)"
		}
	}
	add(ratioT)
	add(rate)
	add(rss)
}
