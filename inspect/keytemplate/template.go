// Package keytemplate parses and matches key templates: the shape of a
// keyspace's (or a ledger's) key names, with named captures such as
// {principal} or {endpoint...} that records are grouped and found by, and
// fills one from values to name a key.
//
// Floor 0 of ARCHITECTURE.md, a foundation: it imports nothing of
// idemctl's.
package keytemplate

import (
	"fmt"
	"strings"
)

// Template parses keys such as
//
//	atlasmart:ch23:idem:{principal}:{endpoint...}:{idem_key}
//
// {name} captures one segment (no delimiter inside it); {name...} captures
// one or more characters and may span delimiters. Captures alias the key.
type Template struct {
	src   string
	delim byte
	parts []tplPart
	names []string
}

type tplPart struct {
	lit     string // literal text, when capture < 0
	capture int    // index into names, or -1
	span    bool   // {name...}
}

// Parse compiles a key template. An empty template matches every key
// and captures nothing.
func Parse(src string) (*Template, error) {
	t := &Template{src: src, delim: ':'}
	rest := src
	seen := map[string]bool{}
	for rest != "" {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			t.parts = append(t.parts, tplPart{lit: rest, capture: -1})
			break
		}
		if i > 0 {
			t.parts = append(t.parts, tplPart{lit: rest[:i], capture: -1})
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return nil, fmt.Errorf("key template %q: unclosed '{'", src)
		}
		name := rest[i+1 : i+j]
		span := strings.HasSuffix(name, "...")
		name = strings.TrimSuffix(name, "...")
		if !ValidName(name) {
			return nil, fmt.Errorf("key template %q: bad capture name %q (letters, digits, _)", src, name)
		}
		if seen[name] {
			return nil, fmt.Errorf("key template %q: capture %q appears twice", src, name)
		}
		if n := len(t.parts); n > 0 && t.parts[n-1].capture >= 0 {
			return nil, fmt.Errorf("key template %q: captures must be separated by literal text", src)
		}
		if span && t.hasSpan() {
			return nil, fmt.Errorf("key template %q: at most one {name...} capture", src)
		}
		seen[name] = true
		t.parts = append(t.parts, tplPart{capture: len(t.names), span: span})
		t.names = append(t.names, name)
		rest = rest[i+j+1:]
	}
	return t, nil
}

// ValidName reports whether s can name a template capture (or a verify
// hook placeholder): letters, digits and underscores.
func ValidName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func (t *Template) hasSpan() bool {
	for _, p := range t.parts {
		if p.span {
			return true
		}
	}
	return false
}

// Prefix is the literal text every matching key starts with.
func (t *Template) Prefix() string {
	if t.Empty() || t.parts[0].capture >= 0 {
		return ""
	}
	return t.parts[0].lit
}

// String returns the template source.
func (t *Template) String() string { return t.src }

// Names lists the capture names in order.
func (t *Template) Names() []string {
	if t == nil {
		return nil
	}
	return t.names
}

// Parts is how many parts the template has: literals and captures, in
// the order they spell a key.
func (t *Template) Parts() int {
	if t == nil {
		return 0
	}
	return len(t.parts)
}

// Part is the template's i-th part: a literal (capture < 0) or capture
// number capture (an index into Names). The packed record store
// (inspect/recordstore) holds a key that fits its template as the captures
// alone and spells it again through the parts.
func (t *Template) Part(i int) (lit string, capture int) {
	p := &t.parts[i]
	return p.lit, p.capture
}

// Empty reports whether the template has no parts.
func (t *Template) Empty() bool { return t == nil || len(t.parts) == 0 }

// Match returns the captures of key, or ok=false when the key does not fit.
// The returned strings alias key.
func (t *Template) Match(key string) (groups []string, ok bool) {
	if t.Empty() {
		return nil, true
	}
	groups = make([]string, len(t.names))
	if !t.match(0, key, groups) {
		return nil, false
	}
	return groups, true
}

// MatchIn is Match with the captures carved from slab; nil: Match.
func (t *Template) MatchIn(key string, slab *Slab) ([]string, bool) {
	if t.Empty() || slab == nil {
		return t.Match(key)
	}
	groups := slab.next(len(t.names))
	if !t.match(0, key, groups) {
		clear(groups) // a failed try's captures must not pin the key
		return nil, false
	}
	slab.keep(len(groups))
	return groups, true
}

// Slab hands out Record.Groups from shared blocks: one allocation for
// hundreds of records instead of one each. A block lives while any record's
// Groups does; each slice is capped, so an append to one cannot reach the
// next.
type Slab struct{ buf []string }

const slabBlock = 1024

// next is the free room for n captures, taken only by keep.
func (g *Slab) next(n int) []string {
	if g.buf == nil || cap(g.buf)-len(g.buf) < n {
		g.buf = make([]string, 0, max(slabBlock, n))
	}
	i := len(g.buf)
	return g.buf[i : i+n : i+n]
}

func (g *Slab) keep(n int) { g.buf = g.buf[:len(g.buf)+n] }

// match is a small backtracking matcher: literals must match exactly, a
// segment capture takes up to the next delimiter, a span capture tries the
// longest candidate first (so later single-segment captures get one segment).
func (t *Template) match(pi int, s string, groups []string) bool {
	if pi == len(t.parts) {
		return s == ""
	}
	p := t.parts[pi]
	if p.capture < 0 {
		if !strings.HasPrefix(s, p.lit) {
			return false
		}
		return t.match(pi+1, s[len(p.lit):], groups)
	}
	limit := len(s)
	if !p.span {
		if i := strings.IndexByte(s, t.delim); i >= 0 {
			limit = i
		}
	}
	if pi+1 == len(t.parts) { // last part: must take the rest
		if limit != len(s) || limit == 0 {
			return false
		}
		groups[p.capture] = s
		return true
	}
	// The candidate ends, longest first, are where the next literal (never
	// empty: captures are separated by literal text) starts at or before
	// limit: found by LastIndex rather than tried byte by byte.
	next := t.parts[pi+1].lit
	hi := min(limit+len(next), len(s))
	for {
		end := strings.LastIndex(s[:hi], next)
		if end < 1 {
			return false
		}
		groups[p.capture] = s[:end]
		if t.match(pi+1, s[end:], groups) {
			return true
		}
		hi = end - 1 + len(next)
	}
}
