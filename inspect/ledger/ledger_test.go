package ledger_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect/detect"
	"github.com/idemctl/idemctl/inspect/ledger"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

func serverNow(t *testing.T, c *redis.Client) time.Time {
	t.Helper()
	now, err := c.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return now
}

func mustLedger(t *testing.T, sp ledger.Spec) *ledger.Ledger {
	t.Helper()
	l, err := ledger.New(sp)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// zaddAges adds n members aged age+i·step (ms) to key, scored in unit.
func zaddAges(t *testing.T, c *redis.Client, key string, now time.Time, age, step time.Duration, n int, unit string) {
	t.Helper()
	var zs []redis.Z
	for i := range n {
		ms := now.Add(-age - time.Duration(i)*step).UnixMilli()
		score := float64(ms)
		if unit == ledger.ScoreSeconds {
			score = float64(ms) / 1000
		}
		zs = append(zs, redis.Z{Score: score, Member: fmt.Sprintf("evt-%s-%d-%d", key, age, i)})
	}
	if err := c.ZAdd(context.Background(), key, zs...).Err(); err != nil {
		t.Fatal(err)
	}
}

func near(got, want, tol int64) bool { return got >= want-tol && got <= want+tol }

func TestLedgerZSetTrimmedAndUntrimmed(t *testing.T) {
	_, c := redistest.OwnClient(t)
	ctx := context.Background()
	now := serverNow(t, c)
	zaddAges(t, c, "dedupe:trimmed", now, 0, time.Minute, 100, ledger.ScoreMillis)
	zaddAges(t, c, "dedupe:untrimmed", now, 0, time.Minute, 50, ledger.ScoreMillis)
	zaddAges(t, c, "dedupe:untrimmed", now, 241*time.Hour, time.Second, 50, ledger.ScoreMillis)
	c.HSet(ctx, "dedupe:not-a-ledger", "a", "b") // TYPE zset leaves it out
	l := mustLedger(t, ledger.Spec{Name: "d", Preset: ledger.ZSetWindow})
	rep, err := ledger.Read(ctx, c, l, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Keys != 2 || rep.Members != 200 || rep.PastWindow != 50 || rep.AgeKnown != 2 || !rep.Complete || rep.Truncated {
		t.Fatalf("report %+v", rep)
	}
	for i, want := range []int64{50, 50, 50} {
		if rep.Bands[i].Entries != want {
			t.Errorf("band %d×: %d entries, want %d", rep.Bands[i].Windows, rep.Bands[i].Entries, want)
		}
	}
	oldest := (241*time.Hour + 49*time.Second).Milliseconds()
	if !near(rep.OldestAgeMs, oldest, 5000) || !near(rep.NewestAgeMs, 0, 5000) {
		t.Errorf("ages oldest %d newest %d, want %d and 0", rep.OldestAgeMs, rep.NewestAgeMs, oldest)
	}
	if len(rep.Details) != 2 || rep.Details[0].Key != "dedupe:untrimmed" || rep.Details[1].PastWindow != 0 {
		t.Fatalf("details %+v", rep.Details)
	}
	tr := rep.Details[1]
	if tr.Members != 100 || tr.TTLms != -1 || tr.MemoryBytes <= 0 || !near(tr.OldestAgeMs, (99*time.Minute).Milliseconds(), 5000) {
		t.Errorf("trimmed key %+v", tr)
	}
	if rep.MemoryKnown != 2 || rep.MemoryBytes != rep.Details[0].MemoryBytes+tr.MemoryBytes {
		t.Errorf("memory %d over %d keys", rep.MemoryBytes, rep.MemoryKnown)
	}
}

func TestLedgerZSetSecondsAndNotTimes(t *testing.T) {
	_, c := redistest.OwnClient(t)
	ctx := context.Background()
	// The youngest entry a little over two windows old: read within the
	// same millisecond, one exactly two windows old is not "older".
	now := serverNow(t, c).Add(-100 * time.Millisecond)
	zaddAges(t, c, "q:s", now, 2*time.Hour, time.Second, 10, ledger.ScoreSeconds)
	c.ZAdd(ctx, "q:counter", redis.Z{Score: 3, Member: "a"}, redis.Z{Score: 7, Member: "b"})
	l := mustLedger(t, ledger.Spec{Name: "q", Preset: ledger.ZSetWindow, Match: "q:*", Window: time.Hour, ScoreUnit: "s"})
	rep, err := ledger.Read(ctx, c, l, ledger.Options{Count: 10})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Keys != 2 || rep.NotTimes != 1 || rep.AgeKnown != 1 || rep.PastWindow != 10 || rep.Bands[1].Entries != 10 || rep.Bands[2].Entries != 0 {
		t.Fatalf("report %+v", rep)
	}
	if !near(rep.OldestAgeMs, (2*time.Hour + 9*time.Second).Milliseconds(), 5000) {
		t.Errorf("oldest age %d", rep.OldestAgeMs)
	}
}

func TestLedgerSetPerPeriod(t *testing.T) {
	_, c := redistest.OwnClient(t)
	ctx := context.Background()
	now := serverNow(t, c).UTC()
	today, old := now.Format("2006-01-02"), now.AddDate(0, 0, -3).Format("2006-01-02")
	c.SAdd(ctx, "processed:billing:"+today, "e1", "e2", "e3")
	c.Expire(ctx, "processed:billing:"+today, 48*time.Hour)
	c.SAdd(ctx, "processed:billing:"+old, "e1", "e2") // never got its EXPIRE
	c.SAdd(ctx, "processed:billing:latest", "e9")
	c.Expire(ctx, "processed:billing:latest", time.Hour)
	l := mustLedger(t, ledger.Spec{Name: "p", Preset: ledger.SetPerPeriod})
	rep, err := ledger.Read(ctx, c, l, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Keys != 3 || rep.Members != 6 || rep.NoTTL != 1 || rep.PeriodsPast != 1 || rep.PastWindow != 2 || rep.NoPeriod != 1 || rep.AgeKnown != 2 {
		t.Fatalf("report %+v", rep)
	}
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	wantOldest := now.Sub(midnight.AddDate(0, 0, -3)).Milliseconds()
	if !near(rep.OldestAgeMs, wantOldest, 5000) || rep.NewestAgeMs != 0 {
		t.Errorf("ages %d %d, want %d and 0", rep.OldestAgeMs, rep.NewestAgeMs, wantOldest)
	}
	d := rep.Details[0]
	if d.Period != old || d.TTLms != -1 || d.OlderThan != [3]int64{2, 0, 0} {
		t.Errorf("oldest set %+v", d)
	}
}

// A 1M-member zset costs the same handful of commands as a small one, and
// no command returns more than one member.
func TestLedgerBigZSetBoundedCommands(t *testing.T) {
	_, c := redistest.OwnClient(t)
	ctx := context.Background()
	now := serverNow(t, c)
	const n, per = 1_000_000, 10_000
	pipe := c.Pipeline()
	for b := 0; b < n/per; b++ {
		args := []any{"zadd", "dedupe:big"}
		for i := b * per; i < (b+1)*per; i++ {
			args = append(args, now.Add(-time.Duration(i)*time.Second).UnixMilli(), "evt-"+strconv.Itoa(i))
		}
		pipe.Do(ctx, args...)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	c.ConfigResetStat(ctx)
	l := mustLedger(t, ledger.Spec{Name: "big", Preset: ledger.ZSetWindow})
	rep, err := ledger.Read(ctx, c, l, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pastDay := int64(n - 86400 - 1) // scores strictly older than 24h
	if rep.Members != n || !near(rep.PastWindow, pastDay, 30) || rep.Commands != 11 {
		t.Fatalf("members %d past %d (want ~%d) commands %d (want 11)", rep.Members, rep.PastWindow, pastDay, rep.Commands)
	}
	stats := commandCalls(t, c)
	total := int64(0)
	for cmd, calls := range stats {
		switch cmd {
		case "config|resetstat", "hello", "client|setinfo", "select", "ping":
		default: // a new connection's handshake aside
			total += calls
		}
	}
	if stats["zrange"] != 2 || stats["smembers"]+stats["zscan"]+stats["zrangebyscore"] != 0 || total != 11 {
		t.Fatalf("commandstats %v (total %d)", stats, total)
	}
	if !near(rep.OldestAgeMs, int64(n-1)*1000, 30000) {
		t.Errorf("oldest age %d", rep.OldestAgeMs)
	}
}

// commandCalls reads INFO commandstats as command → calls.
func commandCalls(t *testing.T, c *redis.Client) map[string]int64 {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		calls, _, _ := strings.Cut(strings.TrimPrefix(rest, "calls="), ",")
		out[strings.TrimPrefix(name, "cmdstat_")], _ = strconv.ParseInt(calls, 10, 64)
	}
	return out
}

func TestNewLedgerRefuses(t *testing.T) {
	for _, tc := range []struct {
		sp   ledger.Spec
		want string
	}{
		{ledger.Spec{Preset: "zset"}, `unknown ledger preset "zset"`},
		{ledger.Spec{Preset: ledger.ZSetWindow, ScoreUnit: "us"}, `score_unit "us": want ms or s`},
		{ledger.Spec{Preset: ledger.ZSetWindow, Period: "2006"}, "belong to set-per-period"},
		{ledger.Spec{Preset: ledger.SetPerPeriod, ScoreUnit: "ms"}, "belongs to zset-window"},
		{ledger.Spec{Preset: ledger.SetPerPeriod, KeyTemplate: "p:{day}"}, "must capture {period}"},
		{ledger.Spec{Preset: ledger.SetPerPeriod, Period: "day"}, `period "day" is not a Go time layout`},
	} {
		_, err := ledger.New(tc.sp)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.sp, err, tc.want)
		}
	}
	l := mustLedger(t, ledger.Spec{Preset: ledger.SetPerPeriod, KeyTemplate: "h:{period}", Period: "2006-01-02T15"})
	if l.Window != 48*time.Hour || l.Match != "processed:*" {
		t.Errorf("defaults %+v", l)
	}
}

func TestDetectProposesLedgers(t *testing.T) {
	_, c := redistest.OwnClient(t)
	ctx := context.Background()
	now := serverNow(t, c)
	for i := range 4 {
		zaddAges(t, c, fmt.Sprintf("dd:consumer-%d", i), now, time.Hour, time.Minute, 3, ledger.ScoreSeconds)
		c.SAdd(ctx, fmt.Sprintf("seen:svc-%d:2026-12-0%d", i, i+1), "e1")
	}
	res, err := detect.Detect(ctx, c, "dd:*", 50)
	if err != nil {
		t.Fatal(err)
	}
	if res.Ledger == nil || res.Ledger.Preset != ledger.ZSetWindow || res.Ledger.ScoreUnit != "s" || res.Best != nil ||
		!strings.Contains(res.YAML, "kind: ledger") || !strings.Contains(res.YAML, "score_unit: s") {
		t.Fatalf("zsets: %+v\n%s", res.Ledger, res.YAML)
	}
	if !strings.HasPrefix(res.Ledger.Evidence[0], "4 of 4 sampled zsets are scored by epoch times in s") || !strings.Contains(res.Ledger.Evidence[1], "oldest entry 1h02m") {
		t.Errorf("evidence %q", res.Ledger.Evidence)
	}
	res, err = detect.Detect(ctx, c, "seen:*", 50)
	if err != nil {
		t.Fatal(err)
	}
	if res.Ledger == nil || res.Ledger.Preset != ledger.SetPerPeriod || res.Ledger.KeyTemplate != "seen:{consumer}:{period}" || res.Ledger.Period != "2006-01-02" {
		t.Fatalf("sets: %+v\n%s", res.Ledger, res.YAML)
	}
	// the proposal is a ledger the config accepts
	if _, err := ledger.New(ledger.Spec{Preset: res.Ledger.Preset, KeyTemplate: res.Ledger.KeyTemplate, Period: res.Ledger.Period}); err != nil {
		t.Error(err)
	}
	c.ZAdd(ctx, "cnt:a", redis.Z{Score: 1, Member: "x"})
	if res, _ = detect.Detect(ctx, c, "cnt:*", 50); res.Ledger != nil {
		t.Errorf("a zset of counters proposed as a ledger: %+v", res.Ledger)
	}
}
