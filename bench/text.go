package main

import (
	"strings"
)

// firstLine is a command's first line of output ("" when it failed).
func firstLine(b []byte, err error) string {
	if err != nil {
		return ""
	}
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return s
}

// tail is s's last n bytes, for error messages.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
