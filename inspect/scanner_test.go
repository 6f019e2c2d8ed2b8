package inspect_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/inspecttest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

func byKey(recs []inspect.Record) map[string]inspect.Record {
	m := make(map[string]inspect.Record, len(recs))
	for _, r := range recs {
		m[r.Key] = r
	}
	return m
}

func TestScanFindsEverySeededKeyOnce(t *testing.T) {
	_, c := redistest.SharedClient(t)
	ctx := t.Context()
	res := seedRecords(t, c, "atlasmart", 5000, 7)
	c.Set(ctx, "unrelated:key", "x", 0)
	ks := inspecttest.Keyspace(t, "atlasmart")
	ks.ReserveTTL, ks.ProcessingTimeout = time.Hour, 10*time.Minute
	// Batches of 100, several in flight; and under a 1 ms latency budget,
	// one paced batch at a time: the same keys, classified the same.
	for name, opt := range map[string]inspect.Options{"count": {Count: 100}, "budget": {MaxLatency: time.Millisecond}} {
		t.Run(name, func(t *testing.T) {
			recs, cov := inspecttest.ScanAll(t, c, ks, opt)
			if !cov.Complete || cov.Err != nil || cov.Keys != 5000 || len(recs) != 5000 {
				t.Fatalf("coverage %+v, %d records", cov, len(recs))
			}
			want, _ := c.Keys(ctx, "atlasmart:*").Result()
			got := make([]string, len(recs))
			for i, r := range recs {
				got[i] = r.Key
			}
			sort.Strings(want)
			sort.Strings(got)
			if strings.Join(want, "\n") != strings.Join(got, "\n") {
				t.Fatal("scanned keys differ from the keys in Redis")
			}
			var stale, noTTL, large, proc int64
			for _, r := range recs {
				if r.MemoryBytes <= 0 || r.Type != inspect.TypeHash || r.Groups == nil {
					t.Fatalf("record %s: memory %d type %v groups %v", r.Key, r.MemoryBytes, r.Type, r.Groups)
				}
				if r.Stale() {
					stale++
				}
				if r.Flags.Has(inspect.FlagProcessingNoTTL) {
					noTTL++
				}
				if r.Flags.Has(inspect.FlagLargeResponse) {
					large++
				}
				if r.State == inspect.StateProcessing {
					proc++
				}
			}
			e := res.Expected
			if stale != e.Stale || noTTL != e.Flags["processing_no_ttl"] || large != e.Flags["large_response"] || proc != e.ByState["processing"] {
				t.Fatalf("stale %d noTTL %d large %d processing %d; seed expected %+v", stale, noTTL, large, proc, e)
			}
		})
	}
}

// Under a budget the next SCAN rides with the last batch's read: a scan
// that stops early (a key limit, a sample) still reads each key once and
// exactly as many as asked, and the reply sent ahead is not counted.
func TestBudgetScanStopsLikeAnyScan(t *testing.T) {
	_, c := redistest.SharedClient(t)
	seedRecords(t, c, "atlasmart", 5000, 11)
	ks := inspecttest.Keyspace(t, "atlasmart")
	ks.ReserveTTL, ks.ProcessingTimeout = time.Hour, 10*time.Minute
	recs, cov := inspecttest.ScanAll(t, c, ks, inspect.Options{MaxLatency: time.Millisecond, MaxKeys: 1234})
	if !cov.Limited || cov.Keys != 1234 || len(recs) != 1234 || cov.Complete {
		t.Fatalf("--max-keys 1234 under a budget: coverage %+v, %d records", cov, len(recs))
	}
	seen := map[string]bool{}
	for _, r := range recs {
		if seen[r.Key] {
			t.Fatalf("%s read twice", r.Key)
		}
		seen[r.Key] = true
	}
	recs, cov = inspecttest.ScanAll(t, c, ks, inspect.Options{MaxLatency: time.Millisecond, Sample: 0.2, SampleStart: func() uint64 { return 0 }})
	if !cov.Sampled || cov.Share < 0.2 || cov.Share > 0.3 || len(recs) < 600 || len(recs) > 1600 || int64(len(recs)) != cov.Keys {
		t.Fatalf("--sample 20%% under a budget: coverage %+v, %d records", cov, len(recs))
	}
}

func TestScanHostileRecords(t *testing.T) {
	_, c := redistest.SharedClient(t)
	ctx := t.Context()
	p := "atlasmart:ch23:idem:"
	fp := strings.Repeat("a", 64)
	c.RPush(ctx, p+"c:POST:/l:list", "x")
	c.Set(ctx, p+"c:POST:/s:string", "PROCESSING", 0)
	c.HSet(ctx, p+"c:POST:/big:fp", "state", "PROCESSING", "fingerprint", strings.Repeat("f", 200<<10))
	c.HSet(ctx, p+"c:POST:/big:resp", "state", "SUCCEEDED", "fingerprint", fp, "response", strings.Repeat("r", 2<<20))
	many := make([]any, 0, 200_000)
	for i := range 100_000 {
		many = append(many, "f"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+itoa(i), "v")
	}
	c.HSet(ctx, p+"c:POST:/wide:fields", many...)
	c.HSet(ctx, p+"c:POST:/wide:fields", "state", "PROCESSING", "fingerprint", fp)
	evil := p + "c\x1b]52;c;ZXZpbA==\x07:POST:/e:\xff\xfe"
	c.HSet(ctx, evil, "state", "\x1b[2JSUCCEEDED", "fingerprint", "\x9b31m")
	c.HSet(ctx, p+"c:POST:/n:num", "state", "SUCCEEDED", "fingerprint", fp, "status", "NaN")

	recs, cov := inspecttest.ScanAll(t, c, inspecttest.Keyspace(t, "atlasmart"), inspect.Options{})
	if !cov.Complete || len(recs) != 7 {
		t.Fatalf("coverage %+v records %d", cov, len(recs))
	}
	m := byKey(recs)
	check := func(key string, want inspect.Flags, typ inspect.KeyType) inspect.Record {
		t.Helper()
		r, ok := m[key]
		if !ok {
			t.Fatalf("%q not scanned", key)
		}
		if !r.Flags.Has(want) || r.Type != typ {
			t.Errorf("%q: flags %v type %v, want flags ⊇ %v type %v", inspect.Sanitize(key), r.Flags, r.Type, want, typ)
		}
		return r
	}
	check(p+"c:POST:/l:list", inspect.FlagWrongType, inspect.TypeList)
	check(p+"c:POST:/s:string", inspect.FlagWrongType, inspect.TypeString)
	r := check(p+"c:POST:/big:fp", inspect.FlagTruncated|inspect.FlagLongFingerprint, inspect.TypeHash)
	if r.State != inspect.StateProcessing || r.Flags.Has(inspect.FlagMissingFingerprint) || r.Fingerprint != strings.Repeat("f", 512) {
		t.Errorf("big fingerprint: state %v, flags %v, fingerprint of %d bytes (small fields must still be read; the fingerprint's head kept)",
			r.State, r.Flags, len(r.Fingerprint))
	}
	r = check(p+"c:POST:/big:resp", inspect.FlagLargeResponse, inspect.TypeHash)
	if r.ResponseLen != 2<<20 || r.Fingerprint != fp || r.State != inspect.StateSucceeded {
		t.Errorf("big response: len %d fp %q state %v", r.ResponseLen, r.Fingerprint, r.State)
	}
	r = check(p+"c:POST:/wide:fields", 0, inspect.TypeHash)
	if r.State != inspect.StateProcessing || r.Fingerprint != fp {
		t.Errorf("wide hash: %v %q", r.State, r.Fingerprint)
	}
	r = check(evil, inspect.FlagUnknownState, inspect.TypeHash)
	js := string(inspect.AppendJSON(nil, &r))
	if !strings.Contains(js, `"key_base64":`) || strings.ContainsAny(js, "\x1b\x07\x9b") || strings.Contains(js, "\u009b") {
		t.Errorf("hostile JSON not escaped: %s", js)
	}
	check(p+"c:POST:/n:num", inspect.FlagDecodeError, inspect.TypeHash)
}

func TestScanWithoutMemoryPermission(t *testing.T) {
	srv, admin := redistest.SharedClient(t)
	ctx := t.Context()
	seedRecords(t, admin, "atlasmart", 300, 0)
	err := admin.Do(ctx, "ACL", "SETUSER", "nomem", "on", ">nomem-pw", "~*", "-@all",
		"+ping", "+scan", "+type", "+hmget", "+hstrlen", "+hlen", "+pttl", "+time", "+strlen", "+getrange").Err()
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Do(ctx, "ACL", "DELUSER", "nomem")
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "nomem", Password: "nomem-pw", DisableIdentity: true})
	defer c.Close()
	recs, cov := inspecttest.ScanAll(t, c, inspecttest.Keyspace(t, "atlasmart"), inspect.Options{Count: 50})
	if !cov.Complete || cov.Err != nil || len(recs) != 300 || !cov.MemoryOff {
		t.Fatalf("coverage %+v, %d records", cov, len(recs))
	}
	for _, r := range recs {
		if r.MemoryBytes != -1 || r.State == inspect.StateUnknown || r.Fingerprint == "" {
			t.Fatalf("%s: memory %d state %v fp %q", r.Key, r.MemoryBytes, r.State, r.Fingerprint)
		}
	}
}

func TestScanCancelAndLimits(t *testing.T) {
	_, c := redistest.SharedClient(t)
	ctx := t.Context()
	seedRecords(t, c, "setnx", 3000, 0)
	ks := inspecttest.Keyspace(t, "setnx")
	_, cov := inspecttest.ScanAll(t, c, ks, inspect.Options{Count: 100, MaxKeys: 250})
	if cov.Complete || !cov.Limited || cov.Keys != 250 || cov.Records != 250 {
		t.Fatalf("max-keys coverage %+v", cov)
	}
	cctx, cancel := context.WithCancel(ctx)
	out := make(chan inspect.Batch)
	go func() {
		<-out // first batch, then stop
		cancel()
		for range out {
		}
	}()
	covs := inspect.ScanAll(cctx, c, []*inspect.Keyspace{ks}, inspect.Options{Count: 100}, out)
	if covs[0].Complete || covs[0].Err == nil {
		t.Fatalf("cancelled scan reported %+v", covs[0])
	}
	start := time.Now()
	_, cov = inspecttest.ScanAll(t, c, ks, inspect.Options{Count: 100, KeysPerSec: 6000})
	if el := time.Since(start); el < 300*time.Millisecond || !cov.Complete {
		t.Fatalf("3000 keys at 6000 keys/s took %v (want ≥ ~0.5s); complete %v", el, cov.Complete)
	}

	// The callback form (scanAll above reads a whole scan with it): Stop ends
	// the scan without an error, another error ends it with that error, and
	// either is the last call. The stream form reads to the end.
	kss := []*inspect.Keyspace{ks}
	opt := inspect.Options{Count: 100}

	calls := 0
	covs, err := inspect.Scan(ctx, c, kss, opt, func(inspect.Batch) error {
		calls++
		return inspect.Stop
	})
	if err != nil || calls != 1 || covs[0].Complete || !errors.Is(covs[0].Err, context.Canceled) {
		t.Fatalf("stopped scan: %d calls, err %v, coverage %+v (want one call, no error, incomplete)", calls, err, covs[0])
	}

	boom := errors.New("disk full")
	calls = 0
	_, err = inspect.Scan(ctx, c, kss, opt, func(inspect.Batch) error {
		calls++
		return boom
	})
	if !errors.Is(err, boom) || calls != 1 {
		t.Fatalf("failing callback: err %v after %d calls, want %v after 1", err, calls, boom)
	}

	s := inspect.StartScan(ctx, c, kss, opt)
	got := 0
	for b := range s.Batches {
		got += len(b.Records)
	}
	first, again := s.Coverage(), s.Coverage()
	if got != 3000 || len(first) != 1 || !first[0].Complete || len(again) != 1 {
		t.Fatalf("stream: %d records, coverage %+v then %+v", got, first, again)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestScanCommandsPerKey pins the read cost on both paths: PTTL, MEMORY
// USAGE and HMGET per hash record; HLEN only where the size could hold more
// fields than MEMORY USAGE samples (here the large-response records), and
// HSTRLEN of the response only where MEMORY USAGE says it could exceed the
// large-response threshold. The client path, which cannot wait for HLEN
// before its second pipeline, reads those few records' fields by their
// sizes first (atlasmart maps three fields besides the response).
func TestScanCommandsPerKey(t *testing.T) {
	srv := redistest.Own(t)
	c := srv.Client(0)
	defer c.Close()
	ctx := t.Context()
	res := seedRecords(t, c, "atlasmart", 2000, 0)
	large := res.Kinds[appsim.KindLargeResponse]
	if large == 0 {
		t.Fatal("seed wrote no large responses")
	}
	calls := func() map[string]int64 {
		info, err := c.Info(ctx, "commandstats").Result()
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]int64{}
		for _, line := range strings.Split(info, "\r\n") {
			name, rest, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":calls=")
			if ok {
				n, _ := strconv.ParseInt(rest[:strings.IndexByte(rest, ',')], 10, 64)
				m[name] = n
			}
		}
		return m
	}
	const sized = 3
	for _, tc := range []struct {
		name    string
		opt     inspect.Options
		hstrlen int64
	}{
		{"script", inspect.Options{ReadPath: inspect.ReadScript}, large},
		{"script response-sizes", inspect.Options{ReadPath: inspect.ReadScript, ResponseSizes: true}, 2000},
		{"client", inspect.Options{ReadPath: inspect.ReadClient}, large * (sized + 1)},
		{"client response-sizes", inspect.Options{ReadPath: inspect.ReadClient, ResponseSizes: true}, 2000 + large*sized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := c.ConfigResetStat(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			recs, cov := inspecttest.ScanAll(t, c, inspecttest.Keyspace(t, "atlasmart"), tc.opt)
			if !cov.Complete || len(recs) != 2000 {
				t.Fatalf("coverage %+v, %d records", cov, len(recs))
			}
			m := calls()
			if m["pttl"] != 2000 || m["memory|usage"] != 2000 || m["hmget"] != 2000 || m["hstrlen"] != tc.hstrlen || m["hlen"] != large || m["type"] != 0 {
				t.Errorf("commands %v; want 2000 each of pttl, memory|usage, hmget, %d hlen and %d hstrlen", m, large, tc.hstrlen)
			}
			var flagged, measured int64
			for _, r := range recs {
				if r.Flags.Has(inspect.FlagLargeResponse) {
					flagged++
				}
				if r.ResponseLen >= 0 {
					measured++
				}
				if tc.opt.ResponseSizes && r.State == inspect.StateSucceeded && r.ResponseLen <= 0 {
					t.Fatalf("%s: response not measured with ResponseSizes", r.Key)
				}
			}
			if flagged != large || measured < large {
				t.Errorf("large_response on %d records, %d measured; seed wrote %d large", flagged, measured, large)
			}
		})
	}
}

// TestScanMisfitsWithoutProbe checks that keys of the wrong type are still
// recognised when no per-key probe runs before HMGET: small ones through
// HMGET's WRONGTYPE, big ones through HSTRLEN's.
func TestScanMisfitsWithoutProbe(t *testing.T) {
	srv := redistest.Own(t)
	c := srv.Client(0)
	defer c.Close()
	ctx := t.Context()
	p := "atlasmart:ch23:idem:"
	fp := strings.Repeat("a", 64)
	big := make([]any, 0, 3000)
	for i := range 3000 {
		big = append(big, "member-"+itoa(i)+strings.Repeat("m", 40))
	}
	c.SAdd(ctx, p+"c:POST:/set:big", big...)
	c.ZAdd(ctx, p+"c:POST:/zset:small", redis.Z{Score: 1, Member: "x"})
	c.Set(ctx, p+"c:POST:/str:big", strings.Repeat("s", 200<<10), 0)
	c.HSet(ctx, p+"c:POST:/ok:mid", "state", "SUCCEEDED", "fingerprint", fp, "response", strings.Repeat("r", 20<<10))
	c.HSet(ctx, p+"c:POST:/ok:small", "state", "SUCCEEDED", "fingerprint", fp, "response", `{"ok":true}`)
	for _, opt := range []inspect.Options{{}, {NoMemory: true}} {
		recs, cov := inspecttest.ScanAll(t, c, inspecttest.Keyspace(t, "atlasmart"), opt)
		if !cov.Complete || len(recs) != 5 {
			t.Fatalf("%+v: coverage %+v, %d records", opt, cov, len(recs))
		}
		m := byKey(recs)
		for key, typ := range map[string]inspect.KeyType{"set:big": inspect.TypeSet, "zset:small": inspect.TypeZSet, "str:big": inspect.TypeString} {
			r := m[p+"c:POST:/"+key]
			if !r.Flags.Has(inspect.FlagWrongType) || r.Type != typ {
				t.Errorf("%+v %s: flags %v type %v, want wrong_type %v", opt, key, r.Flags, r.Type, typ)
			}
		}
		if r := m[p+"c:POST:/ok:mid"]; r.ResponseLen != 20<<10 || !r.Flags.Has(inspect.FlagLargeResponse) || r.State != inspect.StateSucceeded {
			t.Errorf("%+v mid response: len %d flags %v state %v", opt, r.ResponseLen, r.Flags, r.State)
		}
		wantSmall := int64(-1) // under the threshold by MEMORY USAGE: not measured
		if opt.NoMemory {
			wantSmall = int64(len(`{"ok":true}`))
		}
		if r := m[p+"c:POST:/ok:small"]; r.ResponseLen != wantSmall || r.Fingerprint != fp {
			t.Errorf("%+v small response: len %d (want %d) fp %q", opt, r.ResponseLen, wantSmall, r.Fingerprint)
		}
	}
}

func TestInFlightDefaults(t *testing.T) {
	for _, c := range []struct {
		opt  inspect.Options
		want int
	}{
		{inspect.Options{}, 4},
		{inspect.Options{KeysPerSec: 20000}, 1},
		{inspect.Options{Pause: time.Millisecond}, 1},
		{inspect.Options{KeysPerSec: 20000, InFlight: 3}, 3},
	} {
		if got := c.opt.WithDefaults().InFlight; got != c.want {
			t.Errorf("%+v: %d pipelines in flight, want %d", c.opt, got, c.want)
		}
	}
}

// Batches carry the share of the scan done, from the cursor: it never goes
// back, and the scan ends at the whole of it.
func TestScanReportsProgress(t *testing.T) {
	_, c := redistest.SharedClient(t)
	ctx := t.Context()
	seedRecords(t, c, "atlasmart", 5000, 3)
	var shares []float64
	var last inspect.Progress
	opt := inspect.Options{Count: 200, InFlight: 1, Progress: func(p inspect.Progress) { last = p }}
	ks := inspecttest.Keyspace(t, "atlasmart")
	_, err := inspect.Scan(ctx, c, []*inspect.Keyspace{ks}, opt, func(b inspect.Batch) error {
		shares = append(shares, b.Done)
		return nil
	})
	if err != nil || len(shares) < 10 {
		t.Fatalf("%d batches, %v", len(shares), err)
	}
	for i := 1; i < len(shares); i++ {
		if shares[i] < shares[i-1] {
			t.Fatalf("progress went back: %v", shares)
		}
	}
	if mid := shares[len(shares)/2]; mid < 0.2 || mid > 0.8 {
		t.Errorf("half the batches in, progress %.2f", mid)
	}
	if last := shares[len(shares)-1]; last != 1 {
		t.Errorf("the last batch says %.3f done", last)
	}
	if last.Done != 1 || last.Records != 5000 || last.Rate() <= 0 {
		t.Errorf("the last progress report: %+v", last)
	}
	// Cut short, the report says how much it covered.
	st := inspect.NewStats(3)
	covs, _ := inspect.Scan(ctx, c, []*inspect.Keyspace{ks}, inspect.Options{Count: 200, InFlight: 1, MaxKeys: 2000}, func(b inspect.Batch) error {
		st.Add(b)
		return nil
	})
	st.AddCoverage(covs...)
	if r := st.Report(); r.Complete || r.Covered < 0.2 || r.Covered > 0.6 {
		t.Errorf("2,000 of 5,000 keys: complete %v, covered %.2f", r.Complete, r.Covered)
	}
}

// seedRecords writes n records of a preset's schema that stay as written for
// an hour (reserve TTL 1h, timeout 10m) and returns what was seeded.
func seedRecords(t *testing.T, c redis.UniversalClient, schema string, n int, seed uint64) appsim.Result {
	t.Helper()
	res, err := appsim.Seed(t.Context(), c, appsim.Plan{Schema: schema, Count: n, ReserveTTL: time.Hour,
		ProcessingTimeout: 10 * time.Minute, Retention: time.Hour, LargeResponse: 16 << 10, RandSeed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A sample's estimates hold the true counts: 10 % samples from 20 random
// starts over 20,000 seeded records, each count's 95 % interval compared
// with the full scan's count. At least 90 % of all comparisons must hold
// (the harness asks 95 % over more runs; a test this size allows noise).
func TestSampleIntervalsHoldTheTrueCounts(t *testing.T) {
	_, c := redistest.SharedClient(t)
	ctx := t.Context()
	seedRecords(t, c, "atlasmart", 20000, 11)
	ks := inspecttest.Keyspace(t, "atlasmart")
	ks.ReserveTTL, ks.ProcessingTimeout = time.Hour, 10*time.Minute
	report := func(opt inspect.Options) inspect.Report {
		st := inspect.NewStats(5)
		covs, err := inspect.Scan(ctx, c, []*inspect.Keyspace{ks}, opt, func(b inspect.Batch) error { st.Add(b); return nil })
		if err != nil {
			t.Fatal(err)
		}
		st.AddCoverage(covs...)
		return st.Report()
	}
	full := report(inspect.Options{})
	if full.Sample != nil || !full.Complete {
		t.Fatalf("the full scan: complete %v, sample %+v", full.Complete, full.Sample)
	}
	truth := map[string]int64{"total": full.Total, "stale": full.Stale, "memory_bytes.total": full.MemoryBytes.Total}
	for st, n := range full.ByState {
		truth["by_state."+st] = n
	}
	for f, n := range full.Flags {
		truth["flags."+f] = n
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var held, checked int
	for run := 0; run < 20; run++ {
		r := report(inspect.Options{Count: 100, Sample: 0.1, SampleStart: rng.Uint64})
		if r.Sample == nil || r.Complete || math.Abs(r.Sample.Share-0.1) > 0.03 {
			t.Fatalf("run %d: sample %+v, complete %v", run, r.Sample, r.Complete)
		}
		for path, v := range truth {
			iv, ok := r.Sample.Intervals95[path]
			if !ok {
				t.Fatalf("run %d: no interval for %s", run, path)
			}
			checked++
			if iv.Contains(v) {
				held++
			}
		}
	}
	if float64(held) < 0.9*float64(checked) {
		t.Fatalf("only %d of %d intervals held the true count", held, checked)
	}
	t.Logf("%d of %d intervals held the true count", held, checked)
}

// A hash record whose fields carry the TTLs (Redis 7.4+ HPEXPIRE) and whose
// key has none expires with its fields: it is reported with their TTL, its
// age derived from it, and not as blocked forever. Fields ending at
// different times are flagged.
func TestHashFieldTTLs(t *testing.T) {
	_, c := redistest.SharedClient(t)
	redistest.RequireFieldTTL(t, c)
	ctx := t.Context()
	whole := "atlasmart:ch23:idem:c1:POST:/orders:hfe1"
	mixed := "atlasmart:ch23:idem:c1:POST:/orders:hfe2"
	c.HSet(ctx, whole, "fingerprint", "abc", "state", "PROCESSING")
	c.Do(ctx, "hpexpire", whole, 50000, "fields", 2, "fingerprint", "state")
	c.HSet(ctx, mixed, "fingerprint", "def", "state", "SUCCEEDED", "status", "201", "response", `{"id":2}`)
	c.Do(ctx, "hpexpire", mixed, 60000, "fields", 3, "fingerprint", "state", "status") // the response never ends
	recs, _ := inspecttest.ScanAll(t, c, inspecttest.Keyspace(t, "atlasmart"), inspect.Options{})
	got := byKey(recs)
	r := got[whole]
	if r.TTLms <= 49000 || r.TTLms > 50000 || r.Flags.Has(inspect.FlagNoTTL) || r.Flags.Has(inspect.FlagProcessingNoTTL) ||
		r.AgeSource != inspect.AgeTTL || r.AgeMs < 10000 || r.AgeMs > 11000 {
		t.Fatalf("field TTLs: ttl %d flags %v age %d from %v", r.TTLms, r.Flags, r.AgeMs, r.AgeSource)
	}
	r = got[mixed]
	if r.TTLms <= 59000 || !r.Flags.Has(inspect.FlagFieldTTLMixed) || r.Flags.Has(inspect.FlagNoTTL) {
		t.Fatalf("a response that outlives its state: ttl %d flags %v", r.TTLms, r.Flags)
	}
	// The detail view shows each field's own TTL.
	d, err := inspect.FetchDetail(ctx, c, inspecttest.Keyspace(t, "atlasmart"), mixed)
	if err != nil {
		t.Fatal(err)
	}
	ttl := map[string]int64{}
	for _, f := range d.Fields {
		ttl[f.Name] = f.TTLms
	}
	if ttl["state"] <= 59000 || ttl["response"] != -1 {
		t.Fatalf("detail field TTLs: %v", ttl)
	}
}

// Seeded with field TTLs, a keyspace reads as it does with key TTLs: the
// same counts by state, the same stale records, no record without a TTL
// but those seeded without one.
func TestSeededFieldTTLsReadLikeKeyTTLs(t *testing.T) {
	_, c := redistest.SharedClient(t)
	redistest.RequireFieldTTL(t, c)
	ctx := t.Context()
	plan := appsim.Plan{Schema: "atlasmart", Count: 400, ReserveTTL: 60 * time.Second, ProcessingTimeout: 30 * time.Second,
		Retention: 300 * time.Second, LargeResponse: inspect.DefaultLargeResponse, RandSeed: 9, FieldTTL: true}
	res, err := appsim.Seed(ctx, c, plan)
	if err != nil {
		t.Fatal(err)
	}
	ks := inspecttest.Keyspace(t, "atlasmart")
	recs, _ := inspecttest.ScanAll(t, c, ks, inspect.Options{})
	st := inspect.NewStats(10)
	for i := range recs {
		st.AddRecord(&recs[i])
		if recs[i].TTLms > 0 && c.PTTL(ctx, recs[i].Key).Val() != -1 {
			t.Fatalf("%s: seeded with field TTLs but the key has a TTL", recs[i].Key)
		}
	}
	rep := st.Report()
	for state, n := range res.Expected.ByState {
		if rep.ByState[state] != n {
			t.Errorf("%s: %d, want %d", state, rep.ByState[state], n)
		}
	}
	if rep.Total != res.Expected.Total || rep.Stale != res.Expected.Stale || rep.Flags["no_ttl"] != res.Expected.Flags["no_ttl"] ||
		rep.Flags["processing_no_ttl"] != res.Expected.Flags["processing_no_ttl"] {
		t.Fatalf("stats over field TTLs: total %d stale %d flags %v; want %+v", rep.Total, rep.Stale, rep.Flags, res.Expected)
	}
}
