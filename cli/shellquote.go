package cli

import (
	"fmt"
	"strings"
)

// shellQuote quotes s as one shell word that a person can paste: single
// quotes for printable ASCII, else bash's $'…' with every other byte as
// \xHH, so no escape sequence reaches the terminal and none is read as
// shell syntax.
func shellQuote(s string) string {
	printable := true
	for i := 0; i < len(s); i++ {
		printable = printable && s[i] >= 0x20 && s[i] < 0x7f
	}
	if printable {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' || c == '\'':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, `\x%02x`, c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}
