package inspect

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSanitize(t *testing.T) {
	cases := map[string]string{
		"plain:key-1":                    "plain:key-1",
		"a\x1b[31mred":                   `a\x1b[31mred`,
		"\x1b]52;c;ZXZpbA==\x07x":        `\x1b]52;c;ZXZpbA==\x07x`,
		"nul\x00byte":                    `nul\x00byte`,
		"line\nbreak\ttab\r":             `line\nbreak\ttab\r`,
		"bad\xffutf8":                    `bad\xffutf8`,
		"c1\u009bcsi":                    `c1\u009bcsi`,
		"bidi\u202eevil":                 `bidi\u202eevil`,
		"zero\u200bwidth":                `zero\u200bwidth`,
		"del\x7f":                        `del\x7f`,
		"ünïcödé ok ✓":                   "ünïcödé ok ✓",
		`literal \x1b[31m`:               `literal \\x1b[31m`,
		"arabic\u061cmark":               `arabic\u061cmark`,
		"hangul\u3164\u115f\u1160\uffa0": `hangul\u3164\u115f\u1160\uffa0`,
		"mongolian\u180e":                `mongolian\u180e`,
		"tag\U000e0041\U000e007f":        `tag\U000e0041\U000e007f`,
		"nbsp\u00a0here":                 `nbsp\u00a0here`,
		"\ufe0fstart \ufe0f":             `\ufe0fstart \ufe0f`,
		"heart\u2764\ufe0f":              "heart\u2764\ufe0f",
		"vs\u2764\ufe0f\ufe0f":           "vs\u2764\ufe0f\\ufe0f",
		"sep\u2028\u2029":                `sep\u2028\u2029`,
	}
	for in, want := range cases {
		if got := Sanitize(in); got != want {
			t.Errorf("Sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}

// Text that looks like an escape and the character it names never look
// alike: a literal backslash is escaped too.
func TestSanitizeBackslash(t *testing.T) {
	if a, b := Sanitize("\x1b[31m"), Sanitize(`\x1b[31m`); a == b {
		t.Fatalf("a real ESC and the text \\x1b print the same: %q", a)
	}
	for _, s := range []string{`\`, `a\b`, `\u202e`, "\u202e"} {
		if got, err := unsanitize(Sanitize(s)); err != nil || got != s {
			t.Fatalf("%q → %q → %q %v", s, Sanitize(s), got, err)
		}
	}
}

// A message keeps the backslashes its quoted parts already escaped with,
// and still shows no control character raw.
func TestSanitizeMessage(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`key "a\tb" not found`, `key "a\tb" not found`},
		{"config /tmp/no\x1b]52;c;aGk=\x07such: not found", `config /tmp/no\x1b]52;c;aGk=\x07such: not found`},
		{"a\u202eb \x9b1m \xff", `a\u202eb \x9b1m \xff`},
	} {
		got := SanitizeMessage(c.in)
		if got != c.want {
			t.Errorf("SanitizeMessage(%q) = %q, want %q", c.in, got, c.want)
		}
		noRawControls(t, got)
	}
}

// noRawControls reports the first raw control character in s.
func noRawControls(t *testing.T, s string) {
	t.Helper()
	for _, r := range s {
		if r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r <= 0x9f || unsafeRune(r) {
			t.Fatalf("raw control %U in %q", r, s)
		}
	}
}

func TestAppendJSONStringSafeAndValid(t *testing.T) {
	in := "k\x1b]52;c;x\x07\u009b\u202e\U000e0041\u061c\"\\\xff\x00end"
	out := AppendJSONString(nil, in)
	noRawControls(t, string(out))
	var back string
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatalf("invalid JSON %s: %v", out, err)
	}
	if !utf8.ValidString(back) || !strings.HasSuffix(back, "\x00end") || !strings.Contains(back, "\x1b]52") {
		t.Fatalf("round trip lost data: %q", back)
	}
}
