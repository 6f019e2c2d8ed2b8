package keytemplate

import (
	"strings"
	"testing"
)

func FuzzKeyTemplate(f *testing.F) {
	f.Add("atlasmart:ch23:idem:{principal}:{endpoint...}:{idem_key}", "atlasmart:ch23:idem:c:POST:/orders:r")
	f.Add("{fn}#{digest}", "a.b#c+/=")
	f.Add("{a}:{b}", "::::")
	f.Add("x{", "x")
	f.Fuzz(func(t *testing.T, tpl, key string) {
		tp, err := Parse(tpl)
		if err != nil {
			return
		}
		groups, ok := tp.Match(key)
		if !ok {
			return
		}
		if len(groups) != len(tp.Names()) {
			t.Fatalf("%d groups for %d names", len(groups), len(tp.Names()))
		}
		for _, g := range groups {
			if g == "" || !strings.Contains(key, g) {
				t.Fatalf("capture %q is not a non-empty part of %q", g, key)
			}
		}
	})
}

// BenchmarkTemplateMatchSlab is Match as a snapshot read calls it, the
// captures carved from a shared slab.
func BenchmarkTemplateMatchSlab(b *testing.B) {
	tp, err := Parse("atlasmart:ch23:idem:{principal}:{endpoint...}:{idem_key}")
	if err != nil {
		b.Fatal(err)
	}
	var slab Slab
	b.ReportAllocs()
	for b.Loop() {
		if slab.buf != nil && len(slab.buf) == cap(slab.buf) {
			slab.buf = slab.buf[:0] // reused here only: the benchmark keeps no groups
		}
		tp.MatchIn(benchKey, &slab)
	}
}

const benchKey = "atlasmart:ch23:idem:customer-42:POST:/v2/checkout:confirm:req-1a2b3c-4711"

func BenchmarkTemplateMatch(b *testing.B) {
	tp, err := Parse("atlasmart:ch23:idem:{principal}:{endpoint...}:{idem_key}")
	if err != nil {
		b.Fatal(err)
	}
	if g, ok := tp.Match(benchKey); !ok || g[1] != "POST:/v2/checkout:confirm" {
		b.Fatalf("fixture does not match: %q %v", g, ok)
	}
	b.ReportAllocs()
	for b.Loop() {
		tp.Match(benchKey)
	}
}
