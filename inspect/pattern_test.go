package inspect

import "testing"

func TestMatchPattern(t *testing.T) {
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
		if got := MatchPattern(c.pat, c.key); got != c.want {
			t.Errorf("MatchPattern(%q, %q) = %v", c.pat, c.key, got)
		}
	}
}
