package filter

import (
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/testkit/inspecttest"
	"strings"
	"testing"
)

func TestFilterMatch(t *testing.T) {
	ks := inspecttest.Keyspace(t, "atlasmart")
	rec := func(key string, st inspect.State, fl inspect.Flags) *inspect.Record {
		r := &inspect.Record{Key: key, Keyspace: ks, State: st, Flags: fl}
		if g, ok := ks.Template.Match(key); ok {
			r.Groups = g
		}
		return r
	}
	p := "atlasmart:ch23:idem:"
	stale := rec(p+"customer-42:POST:/v2/checkout:k1", inspect.StateProcessing, inspect.FlagStale|inspect.FlagNoTTL)
	done := rec(p+"customer-7:POST:/v2/orders:k2", inspect.StateSucceeded, 0)
	failed := rec(p+"Kunde-Ü:PUT:/v2/orders:k3", inspect.StateFailed, inspect.FlagNoTTL)
	all := []*inspect.Record{stale, done, failed}

	search := func(text string) Search {
		t.Helper()
		s, err := ParseSearch(text)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	cases := []struct {
		name string
		f    Filter
		want []*inspect.Record
	}{
		{"zero passes all", Filter{}, all},
		{"states: any of", Filter{States: StatesOf(inspect.StateProcessing, inspect.StateFailed)}, []*inspect.Record{stale, failed}},
		{"stale", Filter{Stale: true}, []*inspect.Record{stale}},
		{"flags: all of", Filter{Flags: inspect.FlagStale | inspect.FlagNoTTL}, []*inspect.Record{stale}},
		{"flag", Filter{Flags: inspect.FlagNoTTL}, []*inspect.Record{stale, failed}},
		{"substring, any case", Filter{Search: search("CUSTOMER-4")}, []*inspect.Record{stale}},
		{"substring, non-ASCII key", Filter{Search: search("kunde-ü")}, []*inspect.Record{failed}},
		{"glob", Filter{Search: search("*:/v2/orders:*")}, []*inspect.Record{done, failed}},
		{"capture glob", Filter{Search: search("principal=customer-*")}, []*inspect.Record{stale, done}},
		{"search terms: all of", Filter{Search: search("state=processing state=failed")}, nil},
		{"search stale and flag", Filter{Search: search("stale flag=no_ttl")}, []*inspect.Record{stale}},
		{"criteria combine", Filter{States: StatesOf(inspect.StateFailed, inspect.StateSucceeded), Search: search("orders")}, []*inspect.Record{done, failed}},
		{"brackets are plain", Filter{Search: search("[k]*")}, nil},
	}
	for _, c := range cases {
		var got []*inspect.Record
		for _, r := range all {
			if c.f.Match(r) {
				got = append(got, r)
			}
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: %d records match, want %d", c.name, len(got), len(c.want))
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: matched %s, want %s", c.name, got[i].Key, c.want[i].Key)
			}
		}
		if c.f.Active() != (c.name != "zero passes all") {
			t.Errorf("%s: active %v", c.name, c.f.Active())
		}
	}
}

func TestFilterParseAndDescribe(t *testing.T) {
	st, err := ParseStates([]string{" Processing", "failed "})
	if err != nil || st != StatesOf(inspect.StateProcessing, inspect.StateFailed) {
		t.Fatalf("ParseStates: %v, %v", st, err)
	}
	fl, err := ParseFlags([]string{"no_ttl", " stale"})
	if err != nil || fl != inspect.FlagNoTTL|inspect.FlagStale {
		t.Fatalf("ParseFlags: %v, %v", fl, err)
	}
	s, err := ParseSearch("customer-42 principal=c*")
	if err != nil {
		t.Fatal(err)
	}
	f := Filter{States: st, Stale: true, Flags: fl, Search: s}
	if got, want := f.String(), "state=processing,failed stale flag=stale,no_ttl customer-42 principal=c*"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if s.String() != "customer-42 principal=c*" {
		t.Errorf("the search text is kept for editing: %q", s.String())
	}
	for _, bad := range []struct{ err error }{
		{second(ParseStates([]string{"done"}))},
		{second(ParseSearch("state=done"))},
	} {
		if bad.err == nil || !strings.Contains(bad.err.Error(), `unknown state "done"`) || !strings.Contains(bad.err.Error(), "reconciled") {
			t.Errorf("bad state: %v", bad.err)
		}
	}
	for _, err := range []error{second(ParseFlags([]string{"nottl2"})), second(ParseSearch("flag=nottl2"))} {
		if err == nil || !strings.Contains(err.Error(), `unknown flag "nottl2"`) || !strings.Contains(err.Error(), "processing_no_ttl (stuck)") {
			t.Errorf("bad flag: %v", err)
		}
	}
	// The TUI's table shows one short word per flag; a filter takes it too.
	if fs, err := ParseFlags([]string{"stuck", "nottl"}); err != nil || fs != inspect.FlagProcessingNoTTL|inspect.FlagNoTTL {
		t.Errorf("short flag names: %v %v", fs, err)
	}
	for _, fi := range inspect.AllFlags() {
		if f, err := inspect.ParseFlag(fi.Short); err != nil || f != fi.Flag {
			t.Errorf("short name %q of %s: %v %v", fi.Short, fi.Name, f, err)
		}
	}
}

func second[T any](_ T, err error) error { return err }

// The TUI filters its whole view on every change: no allocation per record.
func TestFilterMatchAllocatesNothing(t *testing.T) {
	ks := inspecttest.Keyspace(t, "atlasmart")
	r := &inspect.Record{Key: "atlasmart:ch23:idem:customer-42:POST:/v2/checkout:k1", Keyspace: ks, State: inspect.StateProcessing}
	r.Groups, _ = ks.Template.Match(r.Key)
	s, err := ParseSearch("customer *checkout* principal=cust* state=processing")
	if err != nil {
		t.Fatal(err)
	}
	f := Filter{States: StatesOf(inspect.StateProcessing), Search: s}
	if n := testing.AllocsPerRun(100, func() { f.Match(r) }); n != 0 || !f.Match(r) {
		t.Fatalf("Match: %v allocations, matched %v", n, f.Match(r))
	}
}

// Lower-casing eight bytes at a time agrees with a byte at a time, at
// every length and on every byte value.
func TestAppendLowerASCII(t *testing.T) {
	for c := range 256 {
		for n := range 20 {
			s := strings.Repeat("aZ@[`{", 4)[:n] + string(rune(0)) + strings.Repeat(string([]byte{byte(c)}), n+1)
			got, ascii := appendLowerASCII([]byte("x"), s)
			wantASCII := c < 0x80
			if ascii != wantASCII {
				t.Fatalf("%q: ascii %v", s, ascii)
			}
			if ascii && string(got) != "x"+strings.ToLower(s) || !ascii && string(got) != "x" {
				t.Fatalf("%q: got %q", s, got)
			}
		}
	}
}
