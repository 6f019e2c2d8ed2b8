package recordstore

import (
	"reflect"
	"strings"
	"testing"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/testkit/inspecttest"
)

// TestRecordStoreEdits: Set, SwapRemove and Compact keep every other
// record as it was, a wide record included, and Compact keeps indices.
func TestRecordStoreEdits(t *testing.T) {
	ks := inspecttest.Keyspace(t, "atlasmart")
	src := heldRecords(t, ks, 5000, 3)
	src = append(src, inspect.Record{Key: strings.Repeat("k", 64<<10), Keyspace: ks, Groups: []string{}})
	var s Store
	s.Append(src)
	want := make([]inspect.Record, len(src))
	for i := range src {
		want[i] = *s.At(i)
	}
	repl := heldRecords(t, ks, 4200, 5)[4100]
	repl.State = inspect.StateProcessing
	s.Set(10, &repl)
	want[10] = *s.At(10)
	if want[10].Key != repl.Key || want[10].State != inspect.StateProcessing {
		t.Fatalf("Set: got %+v", want[10])
	}
	if moved := s.SwapRemove(3); moved != len(src)-1 { // the wide record moves to 3
		t.Fatalf("SwapRemove moved %d", moved)
	}
	want[3] = want[len(want)-1]
	want = want[:len(want)-1]
	if moved := s.SwapRemove(s.Len() - 1); moved != s.Len() {
		t.Fatalf("SwapRemove of the last moved %d", moved)
	}
	want = want[:len(want)-1]
	check := func(stage string) {
		t.Helper()
		if s.Len() != len(want) {
			t.Fatalf("%s: %d records, want %d", stage, s.Len(), len(want))
		}
		for i := range want {
			if got := s.At(i); !reflect.DeepEqual(*got, want[i]) {
				t.Fatalf("%s: record %d\n got %+v\nwant %+v", stage, i, *got, want[i])
			}
		}
	}
	check("edited")
	if s.Garbage() != 3 {
		t.Fatalf("garbage %d, want 3", s.Garbage())
	}
	s.Compact()
	check("compacted")
	if s.Garbage() != 0 {
		t.Fatalf("garbage after Compact: %d", s.Garbage())
	}
	s.Append(src[:1])
	if s.At(s.Len()-1).Key != src[0].Key {
		t.Fatal("append after Compact")
	}
}
