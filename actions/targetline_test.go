package actions

import (
	"strings"
	"testing"
)

// Any key, state and fingerprint round-trip through a --from-file line,
// and the line is one line a here-document cannot end early: no line
// break, no control byte, never "EOF".
func FuzzTargetLine(f *testing.F) {
	for _, s := range []string{"plain:key", "EOF", "#x", " pad ", "a\tb", "x\nEOF\ntouch pwned\n", "\x1b]52;c;x\x07", "\xff", "é\u202e"} {
		f.Add(s, "PROCESSING", "fp")
	}
	f.Fuzz(func(t *testing.T, key, state, fp string) {
		if key == "" {
			return
		}
		line := TargetLine(key, state, fp, "0123456789abcdef0123")
		if line == "EOF" || strings.ContainsAny(line, "\n\r") {
			t.Fatalf("%q: line %q", key, line)
		}
		for i := 0; i < len(line); i++ {
			if c := line[i]; c < 0x20 && c != '\t' || c >= 0x7f {
				t.Fatalf("%q: byte %#x in line %q", key, c, line)
			}
		}
		cols, err := TargetColumns(line)
		if err != nil || len(cols) != 4 || cols[0] != key || cols[1] != state || cols[2] != fp {
			t.Fatalf("%q %q %q → %q → %q %v", key, state, fp, line, cols, err)
		}
	})
}
