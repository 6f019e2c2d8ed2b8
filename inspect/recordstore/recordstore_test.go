package recordstore

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/testkit/inspecttest"
)

// heldRecords builds n records the way a scan does: fresh key and
// fingerprint allocations, captures aliasing the key.
func heldRecords(t testing.TB, ks *inspect.Keyspace, n, states int) []inspect.Record {
	out := make([]inspect.Record, n)
	for i := range out {
		key := fmt.Sprintf("atlasmart:ch23:idem:customer-%d:POST:/orders:req-%08d", i%977, i)
		g, ok := ks.Template.Match(key)
		if !ok {
			t.Fatalf("template does not match %q", key)
		}
		out[i] = inspect.Record{Key: key, Keyspace: ks, Groups: g, Fingerprint: fmt.Sprintf("%064x", i*7919),
			RawState: fmt.Sprintf("STATE-%d", i%states), TTLms: int64(i), MemoryBytes: 300, State: inspect.StateSucceeded}
	}
	return out
}

func TestRecordStoreKeepsEveryField(t *testing.T) {
	ks := inspecttest.Keyspace(t, "atlasmart")
	src := heldRecords(t, ks, 10_000, 300) // more raw states than are interned
	big := strings.Repeat("k", 64<<10)
	src = append(src, inspect.Record{Key: big, Keyspace: ks, RawState: "", Groups: []string{}},
		inspect.Record{Key: "atlasmart:ch23:idem:x", Keyspace: ks, Groups: []string{"outside the key"}})
	want := make([]inspect.Record, len(src))
	for i, r := range src {
		want[i] = r
		want[i].Key, want[i].Fingerprint, want[i].RawState = strings.Clone(r.Key), strings.Clone(r.Fingerprint), strings.Clone(r.RawState)
		want[i].Groups = append([]string(nil), r.Groups...)
		if r.Groups != nil && len(r.Groups) == 0 {
			want[i].Groups = []string{}
		}
	}
	var s Store
	for len(src) > 0 { // uneven batches across chunk boundaries
		n := min(len(src), 777)
		s.Append(src[:n])
		for i := range src[:n] {
			src[i] = inspect.Record{} // the store must not need the batch any more
		}
		src = src[n:]
	}
	if s.Len() != len(want) || s.Capacity() < s.Len() || s.Capacity() >= s.Len()+chunkSize {
		t.Fatalf("len %d capacity %d, want %d", s.Len(), s.Capacity(), len(want))
	}
	for i := range want {
		got, w := s.At(i), &want[i]
		if got.Key != w.Key || got.Fingerprint != w.Fingerprint || got.RawState != w.RawState || got.TTLms != w.TTLms ||
			got.Keyspace != w.Keyspace || (got.Groups == nil) != (w.Groups == nil) || strings.Join(got.Groups, "|") != strings.Join(w.Groups, "|") {
			t.Fatalf("record %d: got %+v\nwant %+v", i, *got, *w)
		}
		if i < 10_000 && len(got.Groups) > 0 && !aliases(got.Groups[0], got.Key) {
			t.Fatalf("record %d: capture %q does not alias the held key", i, got.Groups[0])
		}
	}
	if p := s.At(5); p == s.At(5) || p.Key != want[5].Key {
		t.Fatal("At must return a copy of its own")
	}
	s.Reset()
	if s.Len() != 0 {
		t.Fatal("Reset kept records")
	}
}

// aliases reports whether sub's bytes lie inside s's.
func aliases(sub, s string) bool {
	p, q := uintptr(unsafe.Pointer(unsafe.StringData(sub))), uintptr(unsafe.Pointer(unsafe.StringData(s)))
	return p >= q && p+uintptr(len(sub)) <= q+uintptr(len(s))
}

// TestRecordStoreCost holds the harness's target: ≤ 250 bytes per record
// beyond its key and fingerprint bytes, captures and view included,
// counting the store's memory off the heap too. The compact form holds far
// less: under 90 B per record (keys in their template's form), key and fingerprint text included.
func TestRecordStoreCost(t *testing.T) {
	ks := inspecttest.Keyspace(t, "atlasmart")
	const n = 200_000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var s Store
	var payload int64
	for done := 0; done < n; done += 1000 {
		b := heldRecords(t, ks, 1000, 4)
		for i := range b {
			payload += int64(len(b[i].Key) + len(b[i].Fingerprint))
		}
		s.Append(b)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc) + s.OffHeapBytes()
	per := float64(held-payload) / n
	all := float64(held) / n
	runtime.KeepAlive(&s)
	if per > 250-4 { // the TUI's view index adds 4 B
		t.Errorf("%.0f B per held record beyond key and fingerprint, want ≤ 246", per)
	}
	if all > 90 {
		t.Errorf("%.0f B per held record in all, want ≤ 90", all)
	}
	t.Logf("%.0f B per held record in all (%.0f B of key and fingerprint text)", all, float64(payload)/n)
}
