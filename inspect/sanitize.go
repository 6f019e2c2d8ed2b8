package inspect

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/idemctl/idemctl/internal/units"
)

// Sanitize makes text from Redis safe for a terminal: control characters
// (ESC, CSI, OSC 52, BEL, NUL, C1…), DEL, and every code point that is
// invisible or reorders text (format characters such as bidi marks and
// zero-width joiners, line and paragraph separators, spaces other than
// U+0020, Hangul fillers, tag characters, default-ignorable code points,
// variation selectors standing alone) are shown escaped: \x1b, \u202e,
// \U000e0041; invalid UTF-8 bytes as \xNN. A backslash is shown as \\, so
// the text `\x1b` and a real ESC never look alike. Nothing is ever
// interpreted by the terminal, and the escaped form decodes back to the
// exact bytes.
func Sanitize(s string) string { return sanitize(s, true) }

// SanitizeMessage is Sanitize for a message, such as an error, whose
// quoted parts (%q) already escaped what they hold: it escapes the same
// characters but leaves backslashes single, so `"a\tb"` is not shown as
// `"a\\tb"`. The text is still never interpreted by the terminal.
func SanitizeMessage(s string) string { return sanitize(s, false) }

// Line is a message made fit for one line of a terminal: joined onto one
// line and sanitized as a message.
func Line(s string) string { return SanitizeMessage(units.OneLine(s)) }

func sanitize(s string, backslash bool) string {
	if safeASCII(s, backslash) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	prev := rune(-1) // the last rune written as itself; -1 after an escape
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f && (c != '\\' || !backslash) {
			b.WriteByte(c)
			prev = rune(c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(c))
		case r == '\\':
			b.WriteString(`\\`)
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
		case escapedRune(prev, r):
			if r > 0xffff {
				b.WriteString(`\U`)
				b.WriteString(pad(strconv.FormatInt(int64(r), 16), 8))
			} else {
				b.WriteString(`\u`)
				b.WriteString(pad(strconv.FormatInt(int64(r), 16), 4))
			}
		default:
			b.WriteString(s[i : i+size])
			prev = r
			i += size
			continue
		}
		prev = -1
		i += size
	}
	return b.String()
}

func pad(h string, n int) string { return strings.Repeat("0", max(0, n-len(h))) + h }

// safeASCII reports text sanitize leaves as it is: printable ASCII, without
// a backslash when backslashes are escaped.
func safeASCII(s string, backslash bool) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f || s[i] == '\\' && backslash {
			return false
		}
	}
	return true
}

// hangulFillers are letters (Lo) that render as nothing.
var hangulFillers = [...]rune{0x115f, 0x1160, 0x3164, 0xffa0}

// escapedRune reports a non-ASCII rune a terminal may act on, or that hides
// or reorders text, given prev, the rune written before it as itself (-1
// at the start or after an escape): a variation selector is kept only
// where it can modify the visible character before it.
func escapedRune(prev, r rune) bool {
	switch {
	case r < 0x80:
		return r < 0x20 || r == 0x7f
	case r <= 0x9f: // C1: 0x9b is CSI, 0x9d is OSC
		return true
	case unicode.Is(unicode.Variation_Selector, r):
		// kept after a character it can modify: non-ASCII (emoji, CJK) or a
		// keycap base (0-9 # *); elsewhere it shows nothing
		keycap := prev >= '0' && prev <= '9' || prev == '#' || prev == '*'
		return !keycap && prev < 0x80 || unicode.Is(unicode.Variation_Selector, prev)
	case unicode.In(r, unicode.Cf, unicode.Cc, unicode.Zl, unicode.Zp, unicode.Zs,
		unicode.Other_Default_Ignorable_Code_Point, unicode.Noncharacter_Code_Point):
		return true
	}
	for _, f := range hangulFillers {
		if r == f {
			return true
		}
	}
	return false
}

// unsafeRune reports runes escaped wherever they stand (JSON escapes a
// variation selector even where Sanitize may keep it).
func unsafeRune(r rune) bool { return escapedRune(-1, r) }

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}

// YAMLQuote writes s (text from Redis) as a double-quoted YAML scalar that
// is safe on a terminal and reads back as s: Sanitize's escapes (\\, \n,
// \t, \uXXXX, \UXXXXXXXX) are YAML's own.
func YAMLQuote(s string) string {
	return `"` + strings.ReplaceAll(Sanitize(s), `"`, `\"`) + `"`
}
