package units

import (
	"strings"
	"unicode/utf8"
)

// Clip shortens s to at most n characters, the last one "…" when it cuts.
// It counts and cuts whole UTF-8 characters, never bytes.
func Clip(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n { // n bytes hold at most n characters
		return s
	}
	chars := 0
	for i := range s {
		if chars == n-1 {
			if utf8.RuneCountInString(s[i:]) == 1 {
				return s // exactly n characters
			}
			return s[:i] + "…"
		}
		chars++
	}
	return s
}

// OneLine joins a multi-line message into one line with single spaces, so
// an error fits a status line or a log line whole.
func OneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// ClipMiddle shortens s to at most n characters by cutting its middle
// ("…"), keeping its start and, larger, its end: the end of a key (the
// request id) is what tells two keys of one endpoint apart.
func ClipMiddle(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if n < 3 {
		return string(r[len(r)-n:])
	}
	head := (n - 1) / 3
	tail := n - 1 - head
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}
