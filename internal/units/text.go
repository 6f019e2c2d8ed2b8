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
