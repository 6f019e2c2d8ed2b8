package lookup

import (
	"strconv"
	"strings"
	"unicode/utf16"
)

// style is how a runtime writes compact JSON: its numbers, the order of an
// object's members, and whether everything outside printable ASCII is
// escaped (Python's ensure_ascii) or only what JSON requires (JavaScript).
type style struct {
	number func(lit string) string
	order  func([]Member) []Member
	ascii  bool
	spaced bool // Python's default separators, ", " and ": "
}

var (
	// jsStyle is JSON.stringify of what JSON.parse built.
	jsStyle = style{number: jsNumber, order: jsOrder}
	// pyStyle is json.dumps(v, sort_keys=True, separators=(",", ":")).
	pyStyle = style{number: pyNumber, order: byName, ascii: true}
	// pyDefault is json.dumps(v, sort_keys=True): the default separators.
	pyDefault = style{number: pyNumber, order: byName, ascii: true, spaced: true}
)

// jsStringify is JSON.stringify(v) of the value JSON.parse built.
func jsStringify(v Value) string { return pyOrJS(jsStyle, v) }

// pyCanonical is the lesson's canonical form of a JSON body.
func pyCanonical(v Value) string { return pyOrJS(pyStyle, v) }

// pySorted is json.dumps(v, sort_keys=True).
func pySorted(v Value) string { return pyOrJS(pyDefault, v) }

func pyOrJS(s style, v Value) string {
	var b strings.Builder
	s.write(&b, v)
	return b.String()
}

func (s style) write(b *strings.Builder, v Value) {
	switch v.Kind {
	case Null:
		b.WriteString("null")
	case Bool:
		b.WriteString(strconv.FormatBool(v.Bool))
	case Number:
		b.WriteString(s.number(v.Lit))
	case String:
		s.str(b, v.Str)
	case Array:
		b.WriteByte('[')
		for i, it := range v.Items {
			s.comma(b, i)
			s.write(b, it)
		}
		b.WriteByte(']')
	case Object:
		b.WriteByte('{')
		for i, m := range s.order(v.Members) {
			s.comma(b, i)
			s.str(b, m.Name)
			b.WriteByte(':')
			if s.spaced {
				b.WriteByte(' ')
			}
			s.write(b, m.Value)
		}
		b.WriteByte('}')
	}
}

// comma separates the i-th item from the one before.
func (s style) comma(b *strings.Builder, i int) {
	if i == 0 {
		return
	}
	b.WriteByte(',')
	if s.spaced {
		b.WriteByte(' ')
	}
}

// escapes are the short escapes both runtimes write.
var escapes = map[rune]string{'"': `\"`, '\\': `\\`, '\b': `\b`, '\f': `\f`, '\n': `\n`, '\r': `\r`, '\t': `\t`}

func (s style) str(b *strings.Builder, str string) {
	const hexd = "0123456789abcdef"
	b.WriteByte('"')
	for _, r := range str {
		if e, ok := escapes[r]; ok {
			b.WriteString(e)
			continue
		}
		if r >= 0x20 && (r <= 0x7e || !s.ascii) {
			b.WriteRune(r)
			continue
		}
		for _, u := range utf16.Encode([]rune{r}) {
			b.WriteString(`\u`)
			for shift := 12; shift >= 0; shift -= 4 {
				b.WriteByte(hexd[u>>shift&15])
			}
		}
	}
	b.WriteByte('"')
}
