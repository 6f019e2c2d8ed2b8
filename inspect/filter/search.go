package filter

import (
	"encoding/binary"
	"slices"
	"strings"
	"unsafe"

	"github.com/idemctl/idemctl/inspect"
)

// Search is a compiled search: space-separated terms, all of which must
// match.
//
//	customer-42            key contains (case-insensitive)
//	*:POST:/orders:*       key glob (* and ?)
//	principal=customer-4*  a template capture equals (glob)
//	state=processing       canonical state
//	flag=no_ttl            has a flag
//	stale                  stale only
type Search struct {
	text  string
	terms []term
}

type termKind uint8

const (
	termSubstring termKind = iota
	termGlob
	termCapture
	termState
	termFlag
	termStale
)

type term struct {
	kind  termKind
	name  string // capture name
	value string // lower-cased for substrings
	state inspect.State
	flag  inspect.Flags
}

// ParseSearch compiles the user's search text.
func ParseSearch(text string) (Search, error) {
	s := Search{text: text}
	for _, w := range strings.Fields(text) {
		name, value, isKV := strings.Cut(w, "=")
		switch {
		case w == "stale":
			s.terms = append(s.terms, term{kind: termStale})
		case isKV && name == "state":
			st, err := parseStateName(value)
			if err != nil {
				return Search{}, err
			}
			s.terms = append(s.terms, term{kind: termState, state: st})
		case isKV && name == "flag":
			f, err := inspect.ParseFlag(value)
			if err != nil {
				return Search{}, err
			}
			s.terms = append(s.terms, term{kind: termFlag, flag: f})
		case isKV && name != "":
			s.terms = append(s.terms, term{kind: termCapture, name: name, value: value})
		case strings.ContainsAny(w, "*?"):
			s.terms = append(s.terms, term{kind: termGlob, value: w})
		default:
			s.terms = append(s.terms, term{kind: termSubstring, value: strings.ToLower(w)})
		}
	}
	return s, nil
}

// String is the text the search was parsed from, to edit it again.
func (s Search) String() string { return s.text }

// Match reports whether r matches every term.
func (s *Search) Match(r *inspect.Record) bool {
	for i := range s.terms {
		if !s.terms[i].match(r) {
			return false
		}
	}
	return true
}

func (t *term) match(r *inspect.Record) bool {
	if t.kind == termCapture {
		return simpleGlob(t.value, r.Group(t.name))
	}
	return t.matchKey(r.Key, r.State, r.Flags)
}

// matchKey is match for every term but a capture's: what a record's key,
// state and flags decide.
func (t *term) matchKey(key string, st inspect.State, f inspect.Flags) bool {
	switch t.kind {
	case termStale:
		return f.Has(inspect.FlagStale)
	case termState:
		return st == t.state
	case termFlag:
		return f.Has(t.flag)
	case termGlob:
		return simpleGlob(t.value, key)
	default:
		return containsFold(key, t.value)
	}
}

// containsFold is a case-insensitive substring test; sub is lower case. It
// allocates only for keys outside ASCII: it runs on every record of a view.
func containsFold(s, sub string) bool {
	if sub == "" {
		return true
	}
	lower, ascii := asciiCase(s)
	switch {
	case lower:
		return strings.Contains(s, sub)
	case !ascii:
		return strings.Contains(strings.ToLower(s), sub)
	}
	for i := 0; i+len(sub) <= len(s); i++ {
		j := 0
		for j < len(sub) && toLowerASCII(s[i+j]) == sub[j] {
			j++
		}
		if j == len(sub) {
			return true
		}
	}
	return false
}

// asciiCase reports whether s is ASCII without upper case, and whether it is
// ASCII at all.
func asciiCase(s string) (lower, ascii bool) {
	lower = true
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 0x80:
			return false, false
		case c >= 'A' && c <= 'Z':
			lower = false
		}
	}
	return lower, true
}

func toLowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// simpleGlob matches * (any run) and ? (one byte), iteratively so hostile
// keys cannot blow the stack. Unlike glob.Match it treats [ and \ as
// plain characters: people type keys, not Redis patterns, into a search.
func simpleGlob(pattern, s string) bool {
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == s[i]):
			p++
			i++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// Empty reports whether the search has no terms: it matches every record.
func (s *Search) Empty() bool { return len(s.terms) == 0 }

// ReadsCaptures reports whether a term tests a template capture, so that
// a record's captures must be decoded to match it (MatchKey cannot).
func (s *Search) ReadsCaptures() bool {
	for i := range s.terms {
		if s.terms[i].kind == termCapture {
			return true
		}
	}
	return false
}

// MatchKey reports whether a record with this key, state and flags
// matches every term, for a search that reads no capture (ReadsCaptures
// is false): the packed record store (inspect/recordstore) filters its keys
// without decoding a record. An ASCII key is lower-cased once into
// scratch, which MatchKey returns, grown, to be passed again.
func (s *Search) MatchKey(key string, st inspect.State, fl inspect.Flags, scratch []byte) (bool, []byte) {
	lower, ascii := "", false
	for j := range s.terms {
		t := &s.terms[j]
		if t.kind != termSubstring {
			if !t.matchKey(key, st, fl) {
				return false, scratch
			}
			continue
		}
		// A substring over an ASCII key: lower-cased once, then the
		// library's fast search (containsFold's byte loop was most of a
		// filter's time on keys such as "…:POST:/orders:…").
		if lower == "" && !ascii {
			if scratch, ascii = appendLowerASCII(scratch[:0], key); ascii {
				lower = view(scratch)
			}
		}
		if ascii && !strings.Contains(lower, t.value) || !ascii && !containsFold(key, t.value) {
			return false, scratch
		}
	}
	return true, scratch
}

// appendLowerASCII appends s lower-cased to dst, if s is ASCII. Eight
// bytes at a time: it runs on every key a filter reads.
func appendLowerASCII(dst []byte, s string) ([]byte, bool) {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	n := len(dst)
	dst = slices.Grow(dst, len(s))[:n+len(s)]
	out := dst[n:]
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[i:]), 8))
		if w&high != 0 {
			return dst[:n], false
		}
		// A byte's high bit set by +0x3f means ≥ 'A'; by +0x25, > 'Z'.
		upper := (w + ones*(0x80-'A')) &^ (w + ones*(0x80-'Z'-1)) & high
		binary.LittleEndian.PutUint64(out[i:], w|upper>>2)
	}
	for ; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return dst[:n], false
		}
		out[i] = toLowerASCII(c)
	}
	return dst, true
}

// view is b as a string for a comparison, without a copy: valid only
// while b is (a find runs on every record of a view).
func view(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
