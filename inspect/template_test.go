package inspect

import (
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
		tp, err := ParseTemplate(c.tpl)
		if err != nil {
			t.Fatalf("ParseTemplate(%q): %v", c.tpl, err)
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
		if _, err := ParseTemplate(bad); err == nil {
			t.Errorf("ParseTemplate(%q): no error", bad)
		}
	}
}

// A hostile 64 KB key full of delimiters must not make the matcher blow up.
func TestTemplateHostileKey(t *testing.T) {
	tp, _ := ParseTemplate("p:{a}:{b...}:{c}")
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
