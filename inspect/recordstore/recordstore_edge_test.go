package recordstore

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/filter"
	"github.com/idemctl/idemctl/internal/offheap"
	"github.com/idemctl/idemctl/internal/testkit/inspecttest"
)

// edgeRecords are records at every edge of the compact form: keys with and
// without the keyspace prefix, not UTF-8, not fitting the template, huge;
// fingerprints that are not lowercase hex of even length; numbers beyond
// the packed widths and every sentinel; captures that do not alias the key.
func edgeRecords(t testing.TB) []inspect.Record {
	ks := inspecttest.Keyspace(t, "atlasmart")
	other := inspecttest.Keyspace(t, "setnx")
	ok := func(key string) inspect.Record {
		g, fits := ks.Template.Match(key)
		if !fits {
			t.Fatalf("template does not match %q", key)
		}
		return inspect.Record{Key: key, Keyspace: ks, Groups: g, Fingerprint: "0a1b2c3d", RawState: "COMPLETED", TTLms: 1000,
			MemoryBytes: 300, AgeMs: 5, ResponseLen: -1, State: inspect.StateSucceeded, Type: inspect.TypeHash, AgeSource: inspect.AgeTTL}
	}
	var out []inspect.Record
	add := func(f func(r *inspect.Record)) {
		r := ok(fmt.Sprintf("atlasmart:ch23:idem:customer-%d:POST:/orders:req-%d", len(out), len(out)))
		f(&r)
		out = append(out, r)
	}
	add(func(r *inspect.Record) {})
	add(func(r *inspect.Record) {
		r.Key = "atlasmart:ch23:idem:\xff\xfe:GET:/x:\x00k"
		r.Groups, _ = ks.Template.Match(r.Key)
	})
	add(func(r *inspect.Record) { r.Key, r.Groups, r.Flags = "elsewhere:k", nil, inspect.FlagTemplateMismatch })
	add(func(r *inspect.Record) { r.Key = "atlasmart:ch23:idem:"; r.Groups = nil })
	add(func(r *inspect.Record) { r.Key = ""; r.Groups = []string{} })
	add(func(r *inspect.Record) { r.Groups = []string{"not", "in", "the key"} })
	add(func(r *inspect.Record) { r.Groups = []string{"", r.Key[:3], r.Key[len(r.Key)-2:]} })
	add(func(r *inspect.Record) { r.Key = strings.Repeat("k", 70_000) })
	add(func(r *inspect.Record) { r.Key = "atlasmart:ch23:idem:" + strings.Repeat("k", 65_535) })
	for _, fp := range []string{"", "abc", "ABCD", "0A1b", "zz", "a", strings.Repeat("f", 510), strings.Repeat("f", 512),
		strings.Repeat("x", 255), strings.Repeat("x", 256), "00", "ff00", "sha256:ab"} {
		add(func(r *inspect.Record) { r.Fingerprint = fp })
	}
	for _, v := range []int64{-1, -2, -3, 0, math.MaxInt32, math.MinInt32, math.MaxInt32 + 1, math.MinInt32 - 1, math.MaxInt64, math.MinInt64} {
		add(func(r *inspect.Record) { r.TTLms = v })
		add(func(r *inspect.Record) { r.AgeMs = v })
		add(func(r *inspect.Record) { r.MemoryBytes = v })
		add(func(r *inspect.Record) { r.ResponseLen = v })
		add(func(r *inspect.Record) { r.LockTTLms = v })
		add(func(r *inspect.Record) { r.DeadlineMs = v })
	}
	for _, v := range []int64{1_780_000_000_000, 1_780_000_000_000 + math.MinInt32, 1_780_000_000_000 + math.MaxInt32 + 1, 1} {
		add(func(r *inspect.Record) { r.DeadlineMs = v })
	}
	for _, v := range []int32{0, 200, 503, -5, math.MaxInt16 + 1, math.MinInt16 - 1, math.MaxInt32} {
		add(func(r *inspect.Record) { r.Status = v })
	}
	for st := range inspect.StateExpired + 1 {
		for ty := inspect.TypeUnknown; ty <= inspect.TypeOther; ty++ {
			for a := inspect.AgeUnknown; a <= inspect.AgeDeadline; a++ {
				add(func(r *inspect.Record) { r.State, r.Type, r.AgeSource = st, ty, a })
			}
		}
	}
	numFlags := len(inspect.AllFlags())
	for f := range numFlags {
		add(func(r *inspect.Record) { r.Flags = 1 << f })
	}
	add(func(r *inspect.Record) { r.Flags = 1<<numFlags - 1 })
	for i := range 300 { // more raw states than are interned
		add(func(r *inspect.Record) { r.RawState = fmt.Sprintf("S%d\xff", i) })
	}
	add(func(r *inspect.Record) { r.RawState = "" })
	add(func(r *inspect.Record) { r.RawState = strings.Repeat("r", 100_000) })
	add(func(r *inspect.Record) { r.Keyspace, r.Groups = nil, nil })
	add(func(r *inspect.Record) { r.Keyspace, r.Key, r.Groups = other, "lock:x:y", nil })
	add(func(r *inspect.Record) { r.Keyspace, r.Key, r.Groups = other, "idem:x", []string{} })
	return out
}

// Every field of every edge record comes back exactly, however the store
// packed it, and the batch may be reused at once.
func TestRecordStoreRoundTripsEdgeCases(t *testing.T) {
	src := edgeRecords(t)
	want := make([]inspect.Record, len(src))
	for i := range src {
		want[i] = cloneRecord(&src[i])
	}
	var s Store
	for len(src) > 0 {
		n := min(len(src), 37)
		s.Append(src[:n])
		clear(src[:n])
		src = src[n:]
	}
	if len(s.wide) == 0 || len(s.wide) > len(want)/4 {
		t.Errorf("%d of %d edge records in the side table: want some, and most packed", len(s.wide), len(want))
	}
	var p Peeker
	for i := range want {
		if got := s.At(i); !reflect.DeepEqual(*got, want[i]) {
			t.Fatalf("At(%d):\n got %+v\nwant %+v", i, *got, want[i])
		}
		if got := s.Peek(i, &p); !reflect.DeepEqual(*got, want[i]) {
			t.Fatalf("Peek(%d):\n got %+v\nwant %+v", i, *got, want[i])
		}
		if s.State(i) != want[i].State || s.Flags(i) != want[i].Flags || s.AgeMs(i) != want[i].AgeMs ||
			s.TTLms(i) != want[i].TTLms || s.MemoryBytes(i) != want[i].MemoryBytes {
			t.Fatalf("record %d: packed accessors disagree with %+v", i, want[i])
		}
		if !s.KeyIs(i, want[i].Key) || s.KeyIs(i, want[i].Key+"x") || (len(want[i].Key) > 0 && s.KeyIs(i, want[i].Key[1:])) {
			t.Fatalf("record %d: KeyIs wrong for %q", i, want[i].Key)
		}
	}
}

// The compact comparisons and the filter agree with the same tests on the
// records themselves, for every pair of edge records.
func TestRecordStoreComparesAndMatchesAsRecords(t *testing.T) {
	src := edgeRecords(t)
	var s Store
	s.Append(src)
	sign := func(c int) int { return max(-1, min(1, c)) }
	for i := range src {
		for j := range src {
			if got, want := sign(s.CompareKeys(i, j)), strings.Compare(src[i].Key, src[j].Key); got != want {
				t.Fatalf("CompareKeys(%q, %q) = %d, want %d", src[i].Key, src[j].Key, got, want)
			}
			if got, want := sign(s.CompareFingerprints(i, j)), strings.Compare(src[i].Fingerprint, src[j].Fingerprint); got != want {
				t.Fatalf("CompareFingerprints(%q, %q) = %d, want %d", src[i].Fingerprint, src[j].Fingerprint, got, want)
			}
		}
	}
	var p Peeker
	for _, text := range []string{"", "customer-1", "CUSTOMER-1", "\xff", "*:POST:*", "principal=customer-1*", "endpoint=POST:/orders",
		"state=processing", "flag=stale", "stale", "req-1 state=succeeded", "idem:"} {
		srch, err := filter.ParseSearch(text)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []filter.Filter{{Search: srch}, {Search: srch, States: filter.StatesOf(inspect.StateProcessing, inspect.StateFailed)},
			{Search: srch, Stale: true}, {Search: srch, Flags: inspect.FlagNoTTL}} {
			for i := range src {
				if got, want := s.Match(&f, i, &p), f.Match(&src[i]); got != want {
					t.Fatalf("Match(%q, %+v) = %v, want %v", text, src[i], got, want)
				}
			}
		}
	}
}

// Reset frees the store's memory and leaves it usable.
func TestRecordStoreReset(t *testing.T) {
	var s Store
	s.Append(edgeRecords(t))
	if offheap.Mapped && s.OffHeapBytes() == 0 {
		t.Fatal("a mapped store reports no memory off the heap")
	}
	s.Reset()
	if s.Len() != 0 || s.OffHeapBytes() != 0 || s.Capacity() != 0 {
		t.Fatalf("after Reset: %d records, %d bytes off heap", s.Len(), s.OffHeapBytes())
	}
	r := edgeRecords(t)[:1]
	s.Append(r)
	if got := s.At(0); got.Key != r[0].Key {
		t.Fatalf("after Reset and Append: %q", got.Key)
	}
}

// A keyspace with a 30-day retention (TTLs beyond an int32 of ms) and
// records stuck for 40 days stay packed: 8 bytes more a number, not a
// side-table record each.
func TestRecordStoreLongTTLsStayPacked(t *testing.T) {
	ks := inspecttest.Keyspace(t, "atlasmart")
	const month = 30 * 24 * 3600 * 1000
	var s Store
	var want []inspect.Record
	for i := range 1000 {
		key := fmt.Sprintf("atlasmart:ch23:idem:customer-%d:POST:/orders:req-%d", i, i)
		g, _ := ks.Template.Match(key)
		r := inspect.Record{Key: key, Keyspace: ks, Groups: g, Fingerprint: "0a1b", RawState: "COMPLETED", TTLms: month + int64(i),
			MemoryBytes: 300, AgeMs: 4*month/3 - int64(i), ResponseLen: -1, State: inspect.StateSucceeded, Type: inspect.TypeHash, AgeSource: inspect.AgeTTL}
		if i%2 == 0 {
			r.TTLms = int64(i) // mixed with TTLs that fit
		}
		want = append(want, cloneRecord(&r))
		s.Append([]inspect.Record{r})
	}
	if len(s.wide) != 0 || len(s.big) != 1500 {
		t.Fatalf("%d records in the side table, %d big numbers; want 0 and 1500", len(s.wide), len(s.big))
	}
	for i := range want {
		if got := s.At(i); !reflect.DeepEqual(*got, want[i]) {
			t.Fatalf("At(%d):\n got %+v\nwant %+v", i, *got, want[i])
		}
		if s.TTLms(i) != want[i].TTLms || s.AgeMs(i) != want[i].AgeMs {
			t.Fatalf("%d: TTL %d age %d, want %d %d", i, s.TTLms(i), s.AgeMs(i), want[i].TTLms, want[i].AgeMs)
		}
	}
}

// A record's flags must fit its slot's 16 bits.
func TestFlagsFitASlot(t *testing.T) {
	if n := len(inspect.AllFlags()); n > 16 {
		t.Fatalf("%d flags do not fit a slot's 16 bits", n)
	}
}
