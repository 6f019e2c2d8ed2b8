package clitest

import (
	"strings"
	"testing"
)

// PrintedCommand finds the exact command a refused run printed, split into
// arguments as a shell would, and the here-document it feeds on stdin.
func PrintedCommand(t testing.TB, stderr string) (args []string, stdin string) {
	t.Helper()
	lines := strings.Split(stderr, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "  idemctl ") {
			continue
		}
		words := ShellWords(t, strings.TrimPrefix(l, "  idemctl "))
		if n := len(words); n < 4 || words[n-1] != "<<EOF" || words[n-2] != "-" || words[n-3] != "--from-file" || words[n-4] != "--yes" {
			t.Fatalf("the printed command does not end with --yes --from-file - <<'EOF': %q", l)
		}
		var doc strings.Builder
		for _, d := range lines[i+1:] {
			if d == "EOF" {
				return words[:len(words)-1], doc.String()
			}
			doc.WriteString(d + "\n")
		}
		t.Fatalf("unterminated here-document in %q", stderr)
	}
	t.Fatalf("no command printed:\n%s", stderr)
	return nil, ""
}

// ShellWords splits a POSIX shell line of plain words and single quotes.
func ShellWords(t testing.TB, s string) []string {
	t.Helper()
	var out []string
	var cur strings.Builder
	in, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quoted:
			if c == '\'' {
				quoted = false
			} else {
				cur.WriteByte(c)
			}
		case c == '\'':
			quoted, in = true, true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			in = true
		case c == ' ':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		case strings.ContainsRune("\"$`;&|()", rune(c)):
			t.Fatalf("unexpected shell syntax %q in %q", c, s)
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if quoted {
		t.Fatalf("unterminated quote in %q", s)
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}
