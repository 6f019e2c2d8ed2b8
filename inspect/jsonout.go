package inspect

import (
	"encoding/base64"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// AppendJSON appends the record as one JSON object. Strings are escaped so
// the output is safe on a terminal too (C0, C1, DEL and bidi controls as
// \uXXXX); a key that is not valid UTF-8 also gets key_base64 with its exact
// bytes, so scripts can act on it.
func AppendJSON(b []byte, r *Record) []byte {
	b = appendJSONIdentity(append(b, '{'), r)
	b = appendJSONNumbers(b, r)
	b = appendJSONFlags(b, r.Flags)
	b = appendJSONGroups(b, r)
	return append(b, '}')
}

// appendJSONIdentity appends what the record is: key (and key_base64),
// keyspace, type, state, raw state and fingerprint.
func appendJSONIdentity(b []byte, r *Record) []byte {
	b = append(b, `"key":`...)
	b = AppendJSONString(b, r.Key)
	if !utf8.ValidString(r.Key) {
		b = append(b, `,"key_base64":"`...)
		b = base64.StdEncoding.AppendEncode(b, []byte(r.Key))
		b = append(b, '"')
	}
	b = append(b, `,"keyspace":`...)
	name := ""
	if r.Keyspace != nil {
		name = r.Keyspace.Name
	}
	b = AppendJSONString(b, name)
	b = append(b, `,"type":"`...)
	b = append(b, r.Type.String()...)
	b = append(b, `","state":"`...)
	b = append(b, r.State.String()...)
	b = append(b, `","raw_state":`...)
	b = AppendJSONString(b, r.RawState)
	b = append(b, `,"fingerprint":`...)
	if r.Fingerprint == "" {
		return append(b, "null"...)
	}
	return AppendJSONString(b, r.Fingerprint)
}

// appendJSONNumbers appends the record's numbers, null where unknown,
// with its age source, whether it is stale and its deadline if it has one.
func appendJSONNumbers(b []byte, r *Record) []byte {
	b = append(b, `,"status":`...)
	b = appendIntOrNull(b, int64(r.Status), r.Status == 0)
	b = append(b, `,"ttl_ms":`...)
	b = appendIntOrNull(b, r.TTLms, r.TTLms == TTLUnknown)
	b = append(b, `,"memory_bytes":`...)
	b = appendIntOrNull(b, r.MemoryBytes, r.MemoryBytes < 0)
	b = append(b, `,"response_bytes":`...)
	b = appendIntOrNull(b, r.ResponseLen, r.ResponseLen < 0)
	b = append(b, `,"age_ms":`...)
	b = appendIntOrNull(b, r.AgeMs, r.AgeMs < 0)
	b = append(b, `,"age_source":"`...)
	b = append(b, r.AgeSource.String()...)
	b = append(b, `","stale":`...)
	b = strconv.AppendBool(b, r.Stale())
	if r.DeadlineMs > 0 {
		b = append(b, `,"deadline_ms":`...)
		b = strconv.AppendInt(b, r.DeadlineMs, 10)
	}
	return b
}

// appendJSONFlags appends the flags by name, an array.
func appendJSONFlags(b []byte, f Flags) []byte {
	b = append(b, `,"flags":[`...)
	for i, n := range f.Names() {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, n...)
		b = append(b, '"')
	}
	return append(b, ']')
}

// appendJSONGroups appends the key's captures by their template names, an
// object (empty when the key has none).
func appendJSONGroups(b []byte, r *Record) []byte {
	b = append(b, `,"groups":{`...)
	if r.Groups != nil && r.Keyspace != nil {
		for i, n := range r.Keyspace.Template.Names() {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendJSONString(b, n)
			b = append(b, ':')
			b = AppendJSONString(b, r.Groups[i])
		}
	}
	return append(b, '}')
}

func appendIntOrNull(b []byte, v int64, null bool) []byte {
	if null {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, v, 10)
}

// shortEscape is JSON's two-character escape for c, or "".
func shortEscape(c byte) string {
	switch c {
	case '"':
		return `\"`
	case '\\':
		return `\\`
	case '\n':
		return `\n`
	case '\t':
		return `\t`
	case '\r':
		return `\r`
	}
	return ""
}

// AppendJSONString appends s as a JSON string, escaping everything a
// terminal might act on; invalid UTF-8 becomes U+FFFD.
func AppendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
			b = append(b, c)
			i++
			continue
		}
		if esc := shortEscape(c); esc != "" {
			b = append(b, esc...)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			b = append(b, `\ufffd`...)
		case r < 0x20 || r == 0x7f || unsafeRune(r):
			if hi, lo := utf16.EncodeRune(r); hi != utf8.RuneError {
				b = appendU(appendU(b, hi), lo) // a surrogate pair past U+FFFF
			} else {
				b = appendU(b, r)
			}
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

func appendU(b []byte, u rune) []byte {
	const digits = "0123456789abcdef"
	return append(b, '\\', 'u', digits[u>>12&15], digits[u>>8&15], digits[u>>4&15], digits[u&15])
}

// Text is a string from Redis that marshals with AppendJSONString's
// terminal-safe escaping.
type Text string

// MarshalJSON implements json.Marshaler.
func (t Text) MarshalJSON() ([]byte, error) { return AppendJSONString(nil, string(t)), nil }
