package appsim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Kind is one kind of seeded record.
type Kind string

const (
	KindSucceeded       Kind = "succeeded"         // reserved, then completed
	KindProcessing      Kind = "processing"        // reserved recently, within the processing timeout
	KindStale           Kind = "stale"             // reserved long ago: the worker "crashed"
	KindProcessingNoTTL Kind = "processing_no_ttl" // reserved with no TTL: blocked forever
	KindConflict        Kind = "conflict"          // completed, then reused with another body (rejected)
	KindLargeResponse   Kind = "large_response"    // completed with a replay body above the threshold
)

// Kinds lists every kind in output order.
var Kinds = []Kind{KindSucceeded, KindProcessing, KindStale, KindProcessingNoTTL, KindConflict, KindLargeResponse}

// DefaultMix is the share of each kind other than succeeded (which takes the rest).
var DefaultMix = map[Kind]float64{
	KindProcessing:      0.10,
	KindStale:           0.08,
	KindProcessingNoTTL: 0.02,
	KindConflict:        0.05,
	KindLargeResponse:   0.005,
}

// Plan says what to seed.
type Plan struct {
	Schema            string // atlasmart or setnx
	Count             int
	Mix               map[Kind]float64
	ReserveTTL        time.Duration
	ProcessingTimeout time.Duration
	Retention         time.Duration
	LargeResponse     int64
	RandSeed          uint64
	Batch             int
	// FieldTTL moves each record's TTL from the key onto its fields
	// (HPEXPIRE, Redis 7.4+), as applications using hash-field expiry
	// write them: the key itself never expires.
	FieldTTL bool
	// Progress, if set, is told the records written so far after each batch.
	Progress func(written int)
}

// Expected is what a correct scan of the seeded records must report, in the
// shape of the stats JSON.
type Expected struct {
	Total   int64            `json:"total"`
	ByState map[string]int64 `json:"by_state"`
	Stale   int64            `json:"stale"`
	Flags   map[string]int64 `json:"flags"`
}

// Mismatches lists how a report (its total, stale count, and counts by
// state and by flag) differs from what was seeded, one line each; none
// when it agrees.
func (e Expected) Mismatches(total, stale int64, byState, flags map[string]int64) []string {
	var out []string
	if total != e.Total || stale != e.Stale {
		out = append(out, fmt.Sprintf("total %d stale %d, seeded %d and %d", total, stale, e.Total, e.Stale))
	}
	for _, c := range []struct {
		name      string
		got, want map[string]int64
	}{{"by_state", byState, e.ByState}, {"flags", flags, e.Flags}} {
		for _, k := range slices.Sorted(maps.Keys(c.want)) {
			if c.got[k] != c.want[k] {
				out = append(out, fmt.Sprintf("%s[%s] = %d, seeded %d", c.name, k, c.got[k], c.want[k]))
			}
		}
	}
	return out
}

// Result reports what was written.
type Result struct {
	Schema            string         `json:"schema"`
	Match             string         `json:"match"`
	Count             int            `json:"count"`
	Written           int            `json:"written"` // less than count when cut short
	Kinds             map[Kind]int64 `json:"kinds"`
	ConflictsRejected int64          `json:"conflicts_rejected"`
	Expected          Expected       `json:"expected"`
	Principals        int            `json:"principals"`
	Endpoints         int            `json:"endpoints"`
	ReserveTTLMs      int64          `json:"reserve_ttl_ms"`
	TimeoutMs         int64          `json:"processing_timeout_ms"`
	RetentionMs       int64          `json:"retention_ms"`
	LargeResponse     int64          `json:"large_response_bytes"`
	DurationMs        int64          `json:"duration_ms"`
	RecordsPerSec     float64        `json:"records_per_sec"`
}

var atlasEndpoints = []string{"POST:/orders", "POST:/payments", "POST:/refunds", "PUT:/carts/items", "POST:/v2/checkout:confirm"}
var setnxResources = []string{"order", "payment", "refund", "shipment"}

// rec is one planned record.
type rec struct {
	kind   Kind
	key    string
	fp     string
	ageMs  int64
	status int
	resp   string
}

// Seed writes plan.Count records the way an application does (atomic
// reserve and complete scripts, or SET NX for bare markers), pipelined in
// batches, and checks every script's answer.
func Seed(ctx context.Context, c redis.UniversalClient, p Plan) (Result, error) {
	if err := p.check(); err != nil {
		return Result{}, err
	}
	if p.FieldTTL {
		// Asked before anything is written: a server without field TTLs
		// would otherwise be left with records that never expire.
		if err := probeFieldTTL(ctx, c); err != nil {
			return Result{}, err
		}
	}
	p = p.withDefaults()
	start := time.Now()
	rng := rand.New(rand.NewPCG(p.RandSeed, 0x1de7c71))
	runID := fmt.Sprintf("%06x", rng.Uint32()&0xffffff)
	kinds := assignKinds(p, rng)
	nPrincipals := max(8, p.Count/50)
	zipf := rand.NewZipf(rng, 1.2, 4, uint64(nPrincipals-1))
	res := Result{
		Schema: p.Schema, Count: p.Count, Kinds: map[Kind]int64{},
		Principals: nPrincipals, ReserveTTLMs: p.ReserveTTL.Milliseconds(),
		TimeoutMs: p.ProcessingTimeout.Milliseconds(), RetentionMs: p.Retention.Milliseconds(),
		LargeResponse: p.LargeResponse,
	}
	if err := prepareSchema(ctx, c, p, &res); err != nil {
		return res, err
	}
	batch := make([]rec, 0, p.Batch)
	for i := 0; i < p.Count; i++ {
		batch = append(batch, planRecord(p, rng, zipf, runID, i, kinds[i]))
		if len(batch) == p.Batch || i == p.Count-1 {
			if err := writeBatch(ctx, c, p, batch, &res); err != nil {
				return res, err
			}
			res.Written = i + 1
			if p.Progress != nil {
				p.Progress(res.Written)
			}
			batch = batch[:0]
		}
	}
	res.Expected = expected(p, res.Kinds)
	d := time.Since(start)
	res.DurationMs = d.Milliseconds()
	res.RecordsPerSec = float64(int64(float64(p.Count)/d.Seconds()*10)) / 10
	return res, nil
}

// check says what in the plan cannot be seeded.
func (p Plan) check() error {
	switch {
	case p.Count <= 0:
		return fmt.Errorf("count must be positive")
	case p.Schema != "atlasmart" && p.Schema != "setnx":
		return fmt.Errorf("seed writes schema atlasmart or setnx, not %q", p.Schema)
	case p.ReserveTTL < time.Second || p.ReserveTTL%time.Second != 0:
		return fmt.Errorf("reserve TTL must be whole seconds (EXPIRE), got %v", p.ReserveTTL)
	case p.Retention < time.Second:
		return fmt.Errorf("retention must be at least 1s, got %v", p.Retention)
	case p.ReserveTTL <= p.ProcessingTimeout || p.ProcessingTimeout <= 0:
		return fmt.Errorf("reserve TTL (%v) must exceed the processing timeout (%v) so stale records can exist", p.ReserveTTL, p.ProcessingTimeout)
	case p.FieldTTL && p.Schema != "atlasmart":
		return fmt.Errorf("field TTLs need hash records: seed them with the atlasmart schema")
	}
	return nil
}

// probeFieldTTL checks that the server sets hash-field TTLs, on a probe
// key it deletes again.
func probeFieldTTL(ctx context.Context, c redis.UniversalClient) error {
	const probe = "idemctl:seed:field-ttl-probe"
	c.HSet(ctx, probe, "f", "v")
	err := c.Do(ctx, "hpexpire", probe, 1000, "fields", 1, "f").Err()
	c.Del(ctx, probe)
	if err != nil {
		return fmt.Errorf("this server has no hash-field TTLs (HPEXPIRE needs Redis 7.4 or later): %v", err)
	}
	return nil
}

// withDefaults is the plan with its batch size and mix filled in; a bare
// marker's mix has no conflicts.
func (p Plan) withDefaults() Plan {
	if p.Batch <= 0 {
		p.Batch = 1000
	}
	if p.Mix == nil {
		p.Mix = DefaultMix
	}
	if p.Schema == "setnx" {
		p.Mix = withoutConflict(p.Mix)
	}
	return p
}

// prepareSchema sets what the result says of the schema's keys and loads
// the scripts its records are written with.
func prepareSchema(ctx context.Context, c redis.UniversalClient, p Plan, res *Result) error {
	if p.Schema != "atlasmart" {
		res.Match, res.Endpoints = "idempotency:*", len(setnxResources)
		return nil
	}
	res.Match, res.Endpoints = "atlasmart:ch23:idem:*", len(atlasEndpoints)
	for _, s := range []*redis.Script{Reserve, Complete} {
		if err := s.Load(ctx, c).Err(); err != nil {
			return fmt.Errorf("SCRIPT LOAD: %w", err)
		}
	}
	return nil
}

// writeBatch writes one batch of planned records in the plan's schema.
func writeBatch(ctx context.Context, c redis.UniversalClient, p Plan, batch []rec, res *Result) error {
	if p.Schema != "atlasmart" {
		return writeSetnx(ctx, c, p, batch, res)
	}
	if err := writeAtlas(ctx, c, p, batch, res); err != nil {
		return err
	}
	if p.FieldTTL {
		return toFieldTTLs(ctx, c, batch)
	}
	return nil
}

func withoutConflict(mix map[Kind]float64) map[Kind]float64 {
	out := make(map[Kind]float64, len(mix))
	for k, v := range mix {
		if k != KindConflict { // a bare marker has no fingerprint to conflict on
			out[k] = v
		}
	}
	return out
}

// assignKinds gives exact counts per kind, shuffled so kinds interleave.
func assignKinds(p Plan, rng *rand.Rand) []Kind {
	out := make([]Kind, 0, p.Count)
	for _, k := range Kinds {
		if k == KindSucceeded {
			continue
		}
		n := int(float64(p.Count)*p.Mix[k] + 0.5)
		for range min(n, p.Count-len(out)) {
			out = append(out, k)
		}
	}
	for len(out) < p.Count {
		out = append(out, KindSucceeded)
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

func planRecord(p Plan, rng *rand.Rand, zipf *rand.Zipf, runID string, i int, k Kind) rec {
	r := rec{kind: k, status: 201}
	principal := fmt.Sprintf("customer-%d", zipf.Uint64()+1)
	body := fmt.Sprintf(`{"qty":%d,"sku":"sku-%d"}`, 1+rng.IntN(5), rng.IntN(5000))
	r.fp = Fingerprint(body)
	if p.Schema == "atlasmart" {
		ep := atlasEndpoints[rng.IntN(len(atlasEndpoints))]
		r.key = fmt.Sprintf("atlasmart:ch23:idem:%s:%s:req-%s-%d", principal, ep, runID, i)
	} else {
		res := setnxResources[rng.IntN(len(setnxResources))]
		r.key = fmt.Sprintf("idempotency:%s:%s-%d", res, runID, i)
	}
	timeout, reserve := p.ProcessingTimeout.Milliseconds(), p.ReserveTTL.Milliseconds()
	switch k {
	case KindProcessing: // well inside the timeout
		r.ageMs = rng.Int64N(timeout*3/10 + 1)
	case KindStale: // past the timeout, with TTL left to be seen
		span := reserve - timeout
		r.ageMs = timeout + span/10 + rng.Int64N(span*3/10+1)
	}
	r.resp = fmt.Sprintf(`{"order_id":"ord-%s-%d","total_cents":%d}`, runID, i, 100+rng.IntN(100000))
	if k == KindLargeResponse {
		size := p.LargeResponse + 1 + rng.Int64N(p.LargeResponse/4+1)
		head := fmt.Sprintf(`{"order_id":"ord-%s-%d","receipt":"`, runID, i)
		r.resp = head + strings.Repeat("x", int(max(size-int64(len(head))-2, 1))) + `"}`
	}
	return r
}

// Stable is how long after the seed started every seeded record keeps
// the state, stale flag and TTL presence it was seeded with: until the
// oldest fresh processing record passes the processing timeout, the
// oldest stale one expires, or completed ones reach their retention
// (the age ranges of planRecord). A saved copy of the keyspace is exact
// only this long after seeding.
func (p Plan) Stable() time.Duration {
	timeout, reserve := p.ProcessingTimeout.Milliseconds(), p.ReserveTTL.Milliseconds()
	span := reserve - timeout
	freshTurnsStale := timeout - timeout*3/10
	staleExpires := reserve - (timeout + span/10 + span*3/10)
	return time.Duration(min(freshTurnsStale, staleExpires, p.Retention.Milliseconds())) * time.Millisecond
}

// StaleTTL is the shortest and the longest TTL a stale record is seeded
// with: how long after seeding the first and the last of them expire
// (the age range of planRecord: past the timeout by 10% to 40% of the
// reserve TTL's span beyond it).
func (p Plan) StaleTTL() (first, last time.Duration) {
	timeout, reserve := p.ProcessingTimeout.Milliseconds(), p.ReserveTTL.Milliseconds()
	span := reserve - timeout
	oldest, youngest := timeout+span/10+span*3/10, timeout+span/10
	return time.Duration(reserve-oldest) * time.Millisecond, time.Duration(reserve-youngest) * time.Millisecond
}

// MinStaleLife is how long, at least, seed's stale records live by its
// defaults: time to follow the README's walkthrough on them before they
// expire (with a 60s reserve TTL they were gone in about 20 s).
const MinStaleLife = 30 * time.Minute

// DefaultReserveTTL is the reserve TTL seed writes with when none is
// given: the preset's, raised to an hour or more, in whole minutes, so
// that with the processing timeout timeout every stale record lives
// MinStaleLife at least.
func DefaultReserveTTL(preset, timeout time.Duration) time.Duration {
	r := max(preset, time.Hour)
	for {
		if first, _ := (Plan{ReserveTTL: r, ProcessingTimeout: timeout}).StaleTTL(); first >= MinStaleLife {
			return r
		}
		r = r.Truncate(time.Minute) + time.Minute
	}
}

// Fingerprint is the lesson's request fingerprint: sha256 hex of the
// canonical JSON body.
func Fingerprint(canonicalBody string) string {
	sum := sha256.Sum256([]byte(canonicalBody))
	return hex.EncodeToString(sum[:])
}

// toFieldTTLs moves each key's TTL onto its fields. Keys without a TTL
// (the SETNX-forever bug) keep none.
func toFieldTTLs(ctx context.Context, c redis.UniversalClient, batch []rec) error {
	pipe := c.Pipeline()
	ttls := make([]*redis.DurationCmd, len(batch))
	names := make([]*redis.StringSliceCmd, len(batch))
	for i, r := range batch {
		ttls[i] = pipe.PTTL(ctx, r.key)
		names[i] = pipe.HKeys(ctx, r.key)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("field TTLs: %w", err)
	}
	pipe = c.Pipeline()
	for i, r := range batch {
		ttl, fs := ttls[i].Val(), names[i].Val()
		if ttl <= 0 || len(fs) == 0 {
			continue
		}
		args := []any{"hpexpire", r.key, ttl.Milliseconds(), "fields", len(fs)}
		for _, f := range fs {
			args = append(args, f)
		}
		pipe.Persist(ctx, r.key)
		pipe.Do(ctx, args...)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		if strings.Contains(strings.ToLower(err.Error()), "unknown command") {
			return fmt.Errorf("this server has no hash-field TTLs (HPEXPIRE needs Redis 7.4 or later): %w", err)
		}
		return fmt.Errorf("field TTLs: %w", err)
	}
	return nil
}

func writeAtlas(ctx context.Context, c redis.UniversalClient, p Plan, batch []rec, res *Result) error {
	ttl := int64(p.ReserveTTL / time.Second)
	pipe := c.Pipeline()
	reserves := make([]*redis.Cmd, len(batch))
	for i, r := range batch {
		reserves[i] = Reserve.EvalSha(ctx, pipe, []string{r.key}, r.fp, ttl)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("reserve: %w", err)
	}
	for i, r := range batch {
		if got := firstString(reserves[i]); got != "STARTED" {
			return fmt.Errorf("reserve %s: got %q, want STARTED (is the keyspace already seeded?)", r.key, got)
		}
	}
	pipe = c.Pipeline()
	completes := make([]*redis.Cmd, len(batch))
	conflicts := make([]*redis.Cmd, len(batch))
	retention := int64(p.Retention / time.Second)
	for i, r := range batch {
		switch r.kind {
		case KindSucceeded, KindLargeResponse, KindConflict:
			completes[i] = Complete.EvalSha(ctx, pipe, []string{r.key}, r.fp, r.status, r.resp, retention)
			if r.kind == KindConflict {
				other := Fingerprint(`{"qty":99,"sku":"sku-conflict"}`)
				conflicts[i] = Reserve.EvalSha(ctx, pipe, []string{r.key}, other, ttl)
			}
		case KindProcessing, KindStale:
			if r.ageMs > 0 { // time has passed since the reserve
				pipe.PExpire(ctx, r.key, time.Duration(p.ReserveTTL.Milliseconds()-r.ageMs)*time.Millisecond)
			}
		case KindProcessingNoTTL: // the SETNX-forever bug: the TTL was never set
			pipe.Persist(ctx, r.key)
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("complete: %w", err)
	}
	for i, r := range batch {
		if completes[i] != nil {
			if n, _ := completes[i].Int64(); n != 1 {
				return fmt.Errorf("complete %s: script returned %d, want 1", r.key, n)
			}
		}
		if conflicts[i] != nil {
			if got := firstString(conflicts[i]); got != "CONFLICT" {
				return fmt.Errorf("conflicting reuse of %s: got %q, want CONFLICT", r.key, got)
			}
			res.ConflictsRejected++
		}
		res.Kinds[r.kind]++
	}
	return nil
}

func writeSetnx(ctx context.Context, c redis.UniversalClient, p Plan, batch []rec, res *Result) error {
	pipe := c.Pipeline()
	sets := make([]*redis.BoolCmd, len(batch))
	for i, r := range batch {
		ttl := p.ReserveTTL
		if r.kind == KindProcessingNoTTL {
			ttl = 0 // SET NX without EX: the marker never expires
		}
		sets[i] = pipe.SetNX(ctx, r.key, "processing", ttl)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("SET NX: %w", err)
	}
	pipe = c.Pipeline()
	for i, r := range batch {
		if !sets[i].Val() {
			return fmt.Errorf("SET NX %s: key exists (is the keyspace already seeded?)", r.key)
		}
		switch r.kind {
		case KindSucceeded, KindLargeResponse:
			pipe.SetXX(ctx, r.key, r.resp, p.Retention)
		case KindProcessing, KindStale:
			if r.ageMs > 0 {
				pipe.PExpire(ctx, r.key, time.Duration(p.ReserveTTL.Milliseconds()-r.ageMs)*time.Millisecond)
			}
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("complete: %w", err)
	}
	for _, r := range batch {
		res.Kinds[r.kind]++
	}
	return nil
}

func firstString(c *redis.Cmd) string {
	v, err := c.Slice()
	if err != nil || len(v) == 0 {
		if err != nil {
			return "error: " + err.Error()
		}
		return ""
	}
	s, _ := v[0].(string)
	return s
}

func expected(p Plan, kinds map[Kind]int64) Expected {
	e := Expected{
		ByState: map[string]int64{
			"processing": kinds[KindProcessing] + kinds[KindStale] + kinds[KindProcessingNoTTL],
			"succeeded":  kinds[KindSucceeded] + kinds[KindConflict] + kinds[KindLargeResponse],
			"failed":     0, "reconciled": 0, "expired": 0, "unknown": 0,
		},
		Stale: kinds[KindStale],
		Flags: map[string]int64{
			"stale":               kinds[KindStale],
			"no_ttl":              kinds[KindProcessingNoTTL],
			"processing_no_ttl":   kinds[KindProcessingNoTTL],
			"unknown_state":       0,
			"missing_fingerprint": 0,
			"wrong_type":          0,
			"large_response":      kinds[KindLargeResponse],
			"decode_error":        0,
			"template_mismatch":   0,
			"truncated":           0,
		},
	}
	for _, n := range kinds {
		e.Total += n
	}
	return e
}
