package inspect

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Sanitize makes text from Redis safe for a terminal: C0 and C1 control
// characters (ESC, CSI, OSC 52, BEL, NUL…), DEL, bidi overrides and other
// invisible format characters are shown escaped (\x1b, \u202e), and invalid
// UTF-8 bytes as \xNN. Nothing is ever interpreted by the terminal.
func Sanitize(s string) string {
	if safeASCII(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			b.WriteByte(c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(c))
		case r < 0x20 || r == 0x7f:
			switch r {
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			default:
				b.WriteString(`\x`)
				b.WriteString(hex2(byte(r)))
			}
		case unsafeRune(r):
			b.WriteString(`\u`)
			u := strconv.FormatInt(int64(r), 16)
			b.WriteString(strings.Repeat("0", max(0, 4-len(u))) + u)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func safeASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// unsafeRune reports runes a terminal may act on or that hide or reorder text:
// C1 controls, bidi controls, zero-width and other format characters.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f: // C1: 0x9b is CSI, 0x9d is OSC
		return true
	case r >= 0x200b && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2060 && r <= 0x2069:
		return true
	case r == 0xfeff, r == 0x2028, r == 0x2029, r == 0xad:
		return true
	case r >= 0xfff9 && r <= 0xfffb:
		return true
	}
	return false
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}
