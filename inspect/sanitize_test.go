package inspect

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSanitize(t *testing.T) {
	cases := map[string]string{
		"plain:key-1":             "plain:key-1",
		"a\x1b[31mred":            `a\x1b[31mred`,
		"\x1b]52;c;ZXZpbA==\x07x": `\x1b]52;c;ZXZpbA==\x07x`,
		"nul\x00byte":             `nul\x00byte`,
		"line\nbreak\ttab\r":      `line\nbreak\ttab\r`,
		"bad\xffutf8":             `bad\xffutf8`,
		"c1\u009bcsi":             `c1\u009bcsi`,
		"bidi\u202eevil":          `bidi\u202eevil`,
		"zero\u200bwidth":         `zero\u200bwidth`,
		"del\x7f":                 `del\x7f`,
		"ünïcödé ok ✓":            "ünïcödé ok ✓",
	}
	for in, want := range cases {
		if got := Sanitize(in); got != want {
			t.Errorf("Sanitize(%q) = %q, want %q", in, got, want)
		}
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
	in := "k\x1b]52;c;x\x07\u009b\u202e\"\\\xff\x00end"
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
