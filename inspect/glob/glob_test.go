package glob

import (
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	cases := []struct {
		pat, key string
		want     bool
	}{
		{"atlasmart:ch23:idem:*", "atlasmart:ch23:idem:c:POST:/o:r", true},
		{"atlasmart:ch23:idem:*", "atlasmart:ch24:idem:x", false},
		{"idempotency:*", "idempotency:", true},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"h[ae]llo", "hello", true},
		{"h[^e]llo", "hello", false},
		{"h[a-b]llo", "hbllo", true},
		{`a\*b`, "a*b", true},
		{`a\*b`, "axb", false},
		{"*", "", true},
		{"*x*y*", "aaxbbyc", true},
		{"*x*y*", "aaybbxc", false},
	}
	for _, c := range cases {
		if got := Match(c.pat, c.key); got != c.want {
			t.Errorf("Match(%q, %q) = %v", c.pat, c.key, got)
		}
	}
}

func FuzzMatch(f *testing.F) {
	f.Add("atlasmart:*", "atlasmart:x")
	f.Add("h[a-b]llo\\*", "hallo*")
	f.Add("[", "[")
	f.Fuzz(func(t *testing.T, pattern, key string) {
		if Match(pattern, key) && !strings.ContainsAny(pattern, "*?[\\") && pattern != key {
			t.Fatalf("literal pattern %q matched %q", pattern, key)
		}
	})
}
