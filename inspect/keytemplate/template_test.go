package keytemplate

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

func TestTemplateMatch(t *testing.T) {
	const atlas = "atlasmart:ch23:idem:{principal}:{endpoint...}:{idem_key}"
	cases := []struct {
		tpl, key string
		want     []string // nil: no match
	}{
		{atlas, "atlasmart:ch23:idem:customer-42:POST:/orders:req-1", []string{"customer-42", "POST:/orders", "req-1"}},
		{atlas, "atlasmart:ch23:idem:c:POST:/v2/checkout:confirm:req-9", []string{"c", "POST:/v2/checkout:confirm", "req-9"}},
		{atlas, "atlasmart:ch23:idem:c:GET:r", []string{"c", "GET", "r"}},
		{atlas, "atlasmart:ch23:idem:c:r", nil},             // endpoint missing
		{atlas, "atlasmart:ch23:idem::POST:/orders:r", nil}, // empty principal
		{atlas, "atlasmart:ch23:idem:c:POST:/orders:", nil}, // empty idem key
		{atlas, "other:ch23:idem:c:POST:/orders:r", nil},
		{"idempotency:{resource}:{id}", "idempotency:order:12345", []string{"order", "12345"}},
		{"idempotency:{resource}:{id}", "idempotency:order:12:34", nil},
		{"{fn}#{digest}", "svc.handler#abc+/=", []string{"svc.handler", "abc+/="}},
		{"node-idempotency:{method}:{path...}:{key}", "node-idempotency:POST:/a/b:k1", []string{"POST", "/a/b", "k1"}},
		{"", "anything at all", []string{}},
	}
	for _, c := range cases {
		tp, err := Parse(c.tpl)
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.tpl, err)
		}
		got, ok := tp.Match(c.key)
		if c.want == nil {
			if ok {
				t.Errorf("%q on %q: matched %q, want no match", c.tpl, c.key, got)
			}
			continue
		}
		if !ok {
			t.Errorf("%q on %q: no match, want %q", c.tpl, c.key, c.want)
			continue
		}
		if len(c.want) == 0 && len(got) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q on %q: got %q, want %q", c.tpl, c.key, got, c.want)
		}
	}
}

func TestTemplateErrors(t *testing.T) {
	for _, bad := range []string{"a:{x", "a:{}", "a:{x-y}", "{a}{b}", "{a}:{a}", "{a...}:{b...}"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q): no error", bad)
		}
	}
}

// A hostile 64 KB key full of delimiters must not make the matcher blow up.
func TestTemplateHostileKey(t *testing.T) {
	tp, _ := Parse("p:{a}:{b...}:{c}")
	key := "p:" + strings.Repeat(":", 64<<10)
	if _, ok := tp.Match(key); ok {
		t.Fatal("matched a key of colons")
	}
	key = "p:x:" + strings.Repeat("y:", 32<<10) + "z"
	g, ok := tp.Match(key)
	if !ok || g[0] != "x" || g[2] != "z" {
		t.Fatalf("got %v %v", ok, len(g))
	}
}

// matchByteByByte is the matcher before the candidate ends were found by
// LastIndex: every end tried from the longest down.
func matchByteByByte(t *Template, pi int, s string, groups []string) bool {
	if pi == len(t.parts) {
		return s == ""
	}
	p := t.parts[pi]
	if p.capture < 0 {
		return strings.HasPrefix(s, p.lit) && matchByteByByte(t, pi+1, s[len(p.lit):], groups)
	}
	limit := len(s)
	if i := strings.IndexByte(s, t.delim); !p.span && i >= 0 {
		limit = i
	}
	if pi+1 == len(t.parts) {
		if limit != len(s) || limit == 0 {
			return false
		}
		groups[p.capture] = s
		return true
	}
	for end := limit; end >= 1; end-- {
		if strings.HasPrefix(s[end:], t.parts[pi+1].lit) {
			groups[p.capture] = s[:end]
			if matchByteByByte(t, pi+1, s[end:], groups) {
				return true
			}
		}
	}
	return false
}

// TestTemplateMatchAgreesByteByByte compares Match, and MatchIn through a
// slab, with the plain matcher on templates and keys over a small alphabet
// (so that literals recur and the matcher backtracks).
func TestTemplateMatchAgreesByteByByte(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	word := func(n int) string {
		b := make([]byte, 1+rng.IntN(n))
		for i := range b {
			b[i] = ":ab/"[rng.IntN(4)]
		}
		return string(b)
	}
	var slab Slab
	matched := 0
	for range 20_000 {
		var src, kb strings.Builder // kb: the template filled in, at times cut
		for j := range 1 + rng.IntN(4) {
			lit := word(3)
			src.WriteString(lit)
			kb.WriteString(lit + word(4))
			fmt.Fprintf(&src, "{c%d", j)
			if rng.IntN(3) == 0 {
				src.WriteString("...")
			}
			src.WriteString("}")
		}
		if rng.IntN(2) == 0 {
			lit := word(2)
			src.WriteString(lit)
			kb.WriteString(lit)
		}
		tp, err := Parse(src.String())
		if err != nil {
			continue // two spans
		}
		key := kb.String()
		if rng.IntN(4) == 0 {
			key = key[:rng.IntN(len(key))]
		}
		want := make([]string, len(tp.names))
		wok := matchByteByByte(tp, 0, key, want)
		got, ok := tp.Match(key)
		got2, ok2 := tp.MatchIn(key, &slab)
		if ok != wok || ok2 != wok || ok && (!reflect.DeepEqual(got, want) || !reflect.DeepEqual(got2, want)) {
			t.Fatalf("%q on %q: got %q %v, slab %q %v, want %q %v", src.String(), key, got, ok, got2, ok2, want, wok)
		}
		if ok {
			matched++
		}
	}
	if matched < 500 {
		t.Fatalf("only %d keys matched: the test tries too little", matched)
	}
	t.Logf("%d keys matched", matched)
}
