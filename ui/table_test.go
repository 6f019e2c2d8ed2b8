package ui

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/idemctl/idemctl/inspect"
)

// endpointFixture is n stale records of one customer and one long
// endpoint, told apart only by the end of their request ids, as the
// demo's POST:/v2/checkout:confirm.
func endpointFixture(t *testing.T, n int) []inspect.Record {
	t.Helper()
	ks := testKeyspace(t)
	recs := fixture(ks, n)
	for i := range recs {
		key := fmt.Sprintf("atlasmart:ch23:idem:customer-11:POST:/v2/checkout:confirm:req-187de0-%04d", 40+i)
		g, ok := ks.Template.Match(key)
		if !ok || g[len(g)-1] != fmt.Sprintf("req-187de0-%04d", 40+i) {
			t.Fatalf("the template reads %s as %q", key, g)
		}
		recs[i].Key, recs[i].Groups = key, g
	}
	return recs
}

// Issue 46, finding 7: cut to the KEY column, two records of one endpoint
// still read differently: the cut keeps the request id's tail.
func TestRowsOfOneEndpointReadApart(t *testing.T) {
	for _, w := range []int{60, 80, 100} {
		m := newTestModel(t, w, 24, endpointFixture(t, 6))
		seen := map[string]bool{}
		for _, l := range strings.Split(screenText(m), "\n") {
			if i := strings.Index(l, "customer-11"); i >= 0 {
				key := strings.TrimSpace(l[i:])
				if seen[key] {
					t.Fatalf("%d columns: two rows read %q:\n%s", w, key, screenText(m))
				}
				seen[key] = true
			}
		}
		if len(seen) != 6 {
			t.Fatalf("%d columns: %d rows of customer-11, want 6:\n%s", w, len(seen), screenText(m))
		}
		checkFrame(t, m)
	}
}

// The cut of a key: principal and endpoint whole when they leave room for
// the id's tail, else cut themselves; the id's tail always stays.
func TestFitKeyKeepsTheIDTail(t *testing.T) {
	r := endpointFixture(t, 1)[0]
	for _, c := range []struct {
		w    int
		want string
	}{
		{80, "customer-11:POST:/v2/checkout:confirm:req-187de0-0040"},
		{50, "customer-11:POST:/v2/checkout:confirm:…187de0-0040"},
		{38, "customer-11:POST:/v2/checkout…de0-0040"},
		{26, "customer-11:POST:…de0-0040"},
	} {
		if got := strings.TrimRight(fitKey(&r, c.w), " "); got != c.want {
			t.Errorf("fitKey at %d: %q, want %q", c.w, got, c.want)
		}
	}
}

// Rows the sort column ties keep their order across refreshes that read
// the keys in another order: ties are ordered by their key's hash.
func TestTiedRowsKeepTheirPlaces(t *testing.T) {
	recs := endpointFixture(t, 20)
	for i := range recs { // all the same to every column but the key
		recs[i].AgeMs, recs[i].TTLms, recs[i].MemoryBytes, recs[i].Fingerprint = 40_000, 20_000, 232, strings.Repeat("0", 64)
		recs[i].State, recs[i].RawState, recs[i].Flags = inspect.StateProcessing, "PROCESSING", inspect.FlagStale
	}
	m := newTestModel(t, 80, 24, recs)
	for _, sort := range [][]string{nil, {"s"}, {"s"}, {"S"}, {"s", "s", "s"}} {
		press(m, sort...)
		before := viewKeys(m)
		rev := slices.Clone(recs)
		slices.Reverse(rev)
		refresh(m, rev)
		if after := viewKeys(m); !slices.Equal(before, after) {
			t.Fatalf("sort %v: a refresh reordered tied rows:\n%q\n%q", m.store.sortCol, before, after)
		}
	}
}

func viewKeys(m *Model) []string {
	var keys []string
	for pos := range m.store.view {
		keys = append(keys, m.store.at(pos).Key)
	}
	return keys
}
