// Package yamldoc decodes idemctl's YAML documents (the config file, schemas
// and presets) strictly, with errors in the document's own terms: the line,
// the path of the key, and what that key accepts. The decoder's own errors
// name Go types ("field x not found in type config.ScanConfig", "cannot
// unmarshal !!str into bool"), so the document is checked against the target
// type first and decoded only once it is known to fit.
//
// Floor 0 of ARCHITECTURE.md, a foundation: it imports no idemctl package
// but other foundations.
package yamldoc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Decode reads the one document in data into v, a pointer to a struct; a
// second, non-empty document is an error.
// It returns the document's root node, for callers that map entries to
// lines, or nil (and leaves v alone) when the document is empty. Every error
// is one line that starts with "line N: ".
func Decode(data []byte, v any) (*yaml.Node, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, errors.New(syntaxError(err, data))
	}
	// A second document would be silently ignored: refuse it, unless it
	// is empty (a trailing "---").
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, errors.New(syntaxError(err, data))
	case len(next.Content) > 0 && next.Content[0].ShortTag() != "!!null":
		return nil, fmt.Errorf("line %d: a second YAML document (after ---): idemctl reads one; merge it into the first or keep it in another file", next.Content[0].Line)
	}
	if len(doc.Content) == 0 || doc.Content[0].ShortTag() == "!!null" {
		return nil, nil // "---" alone, or only comments
	}
	if err := check(doc.Content[0], reflect.TypeOf(v).Elem(), ""); err != nil {
		return nil, err
	}
	if err := doc.Decode(v); err != nil {
		// check accepts only what the decoder accepts; this is a backstop.
		return nil, errors.New(clean(err))
	}
	return &doc, nil
}

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

// check walks node n against type t, the way the decoder will, and reports
// the first place where they disagree.
func check(n *yaml.Node, t reflect.Type, path string) error {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return nil // an empty value leaves the default
	}
	if t.Kind() == reflect.Pointer {
		return check(n, t.Elem(), path)
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		if err := n.Decode(reflect.New(t).Interface()); err != nil {
			return fail(n, path, err.Error())
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		return checkStruct(n, t, path)
	case reflect.Map:
		return checkMap(n, t, path)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return fail(n, path, "want a list such as [a, b], got "+describe(n))
		}
		for i, item := range n.Content {
			if err := check(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Interface:
		return nil
	}
	return checkScalar(n, t, path)
}

func checkStruct(n *yaml.Node, t reflect.Type, path string) error {
	keys := settings(t)
	if n.Kind != yaml.MappingNode {
		return fail(n, path, fmt.Sprintf("want settings (%s), got %s", knownList(keys), describe(n)))
	}
	seen := map[string]int{}
	return eachPair(n, func(k, v *yaml.Node) error {
		if err := once(seen, k, path); err != nil {
			return err
		}
		f, ok := fieldFor(t, k.Value)
		if !ok {
			return fail(k, "", unknownSetting(k.Value, path, keys))
		}
		return check(v, f.Type, join(path, k.Value))
	}, func(src *yaml.Node) error { return checkStruct(src, t, path) })
}

func checkMap(n *yaml.Node, t reflect.Type, path string) error {
	if n.Kind != yaml.MappingNode {
		return fail(n, path, "want named entries (name: …), got "+describe(n))
	}
	seen := map[string]int{}
	return eachPair(n, func(k, v *yaml.Node) error {
		if k.Kind != yaml.ScalarNode {
			return fail(k, path, "want a plain name as the key, got "+describe(k))
		}
		if err := once(seen, k, path); err != nil {
			return err
		}
		if err := checkScalar(k, t.Key(), path); err != nil {
			return err
		}
		return check(v, t.Elem(), join(path, k.Value))
	}, func(src *yaml.Node) error { return checkMap(src, t, path) })
}

// eachPair visits a mapping's pairs; merge keys (<<: *anchor) hand the
// merged mappings to merge, checked as if written in place.
func eachPair(n *yaml.Node, pair func(k, v *yaml.Node) error, merge func(*yaml.Node) error) error {
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Value == "<<" && k.ShortTag() == "!!merge" {
			srcs := []*yaml.Node{v}
			if v.Kind == yaml.SequenceNode {
				srcs = v.Content
			}
			for _, src := range srcs {
				for src.Kind == yaml.AliasNode && src.Alias != nil {
					src = src.Alias
				}
				if err := merge(src); err != nil {
					return err
				}
			}
			continue
		}
		if err := pair(k, v); err != nil {
			return err
		}
	}
	return nil
}

// once reports a key set twice in one mapping.
func once(seen map[string]int, k *yaml.Node, path string) error {
	if first, dup := seen[k.Value]; dup {
		return fail(k, "", fmt.Sprintf("%s is set twice (first on line %d)", join(path, k.Value), first))
	}
	seen[k.Value] = k.Line
	return nil
}

// checkScalar decodes a lone value into a fresh t, so it accepts exactly
// what the decoder accepts, and says what was wanted when it does not.
func checkScalar(n *yaml.Node, t reflect.Type, path string) error {
	if n.Kind != yaml.ScalarNode {
		return fail(n, path, "want "+wanted(t)+", got "+describe(n))
	}
	err := n.Decode(reflect.New(t).Interface())
	if err == nil && isInt(t) && n.ShortTag() == "!!float" {
		// The decoder drops a fraction (keys_per_sec: 0.5 would read as 0,
		// unthrottled), so a fraction is refused like any other non-number.
		if f, perr := strconv.ParseFloat(n.Value, 64); perr != nil || f != math.Trunc(f) {
			err = errors.New("fraction")
		}
	}
	if err == nil {
		return nil
	}
	switch {
	case t.Kind() == reflect.Bool:
		return fail(n, path, strconv.Quote(n.Value)+" is not true or false")
	case isInt(t):
		if f, perr := strconv.ParseFloat(n.Value, 64); perr == nil && f == math.Trunc(f) {
			return fail(n, path, n.Value+" is out of range")
		}
		return fail(n, path, strconv.Quote(n.Value)+" is not a whole number")
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return fail(n, path, strconv.Quote(n.Value)+" is not a number")
	}
	return fail(n, path, fmt.Sprintf("%q is not %s", n.Value, wanted(t)))
}

func isInt(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// wanted names what a value of kind t looks like in the document.
func wanted(t reflect.Type) string {
	switch {
	case t.Kind() == reflect.Bool:
		return "true or false"
	case isInt(t):
		return "a whole number"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return "a number"
	case t.Kind() == reflect.String:
		return "text"
	}
	return "a single value"
}

// describe names what the document holds at n.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return strconv.Quote(n.Value)
	}
	return "something else"
}

// settings lists a struct's keys in declaration order.
func settings(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		if name, ok := keyOf(t.Field(i)); ok {
			out = append(out, name)
		}
	}
	return out
}

func fieldFor(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		if name, ok := keyOf(t.Field(i)); ok && name == key {
			return t.Field(i), true
		}
	}
	return reflect.StructField{}, false
}

// keyOf is the key the decoder reads into field f (its yaml tag, or the
// lowercased field name), and false for fields the document cannot set.
func keyOf(f reflect.StructField) (string, bool) {
	if !f.IsExported() {
		return "", false
	}
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	switch name {
	case "-":
		return "", false
	case "":
		return strings.ToLower(f.Name), true
	}
	return name, true
}

func unknownSetting(key, path string, known []string) string {
	where := "at the top level"
	if path != "" {
		where = "under " + path
	}
	hint := ""
	if near := closest(key, known); near != "" {
		hint = "did you mean " + near + "? "
	}
	return fmt.Sprintf("unknown setting %q %s (%sknown: %s)", key, where, hint, knownList(known))
}

func knownList(keys []string) string { return strings.Join(keys, ", ") }

// closest is the known key within two edits of key, if one is.
func closest(key string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := distance(key, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b, over bytes (keys
// are ASCII).
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// fail builds the one-line error for node n: "line N: path: msg".
func fail(n *yaml.Node, path, msg string) error {
	if path != "" {
		msg = path + ": " + msg
	}
	return fmt.Errorf("line %d: %s", n.Line, msg)
}

// syntaxError is the parser's message without its "yaml: " prefix, starting
// with the line at fault, with a hint where a tab indents a line (YAML
// indents with spaces only).
func syntaxError(err error, data []byte) string {
	msg := clean(err)
	if strings.Contains(msg, "cannot start any token") && tabIndented(data) {
		msg += " (a tab indents a line: YAML indents with spaces)"
	}
	return fixLine(msg, data)
}

// parserProblems are the problems the YAML parser (as opposed to its
// scanner) reports. The library numbers a parser error's line from 0 but
// a scanner error's from 1, so "line N" of one of these names the line
// before the one at fault; and a problem on the first line gets no line at
// all. These are every problem go.yaml.in/yaml/v3's parserc.go sets
// (TestSyntaxErrorsNameTheLine pins each kind to its line).
var parserProblems = []string{
	"did not find expected <stream-start>",
	"did not find expected <document start>",
	"found undefined tag handle",
	"did not find expected node content",
	"did not find expected '-' indicator",
	"did not find expected key",
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"found duplicate %YAML directive",
	"found incompatible YAML document",
	"found duplicate %TAG directive",
}

var lineNumber = regexp.MustCompile(`^line (\d+): `)

// fixLine makes msg, a syntax error, start with "line N: " naming the line
// at fault, counted from 1: it corrects the parser's count from 0, and
// finds the line of an error the library reports without one (a bad byte,
// an unknown alias).
func fixLine(msg string, data []byte) string {
	if m := lineNumber.FindStringSubmatch(msg); m != nil {
		rest := msg[len(m[0]):]
		n, _ := strconv.Atoi(m[1])
		for _, p := range parserProblems {
			if strings.HasPrefix(rest, p) {
				n++
				break
			}
		}
		if strings.HasPrefix(rest, "did not find expected key") || strings.HasPrefix(rest, "did not find expected '-' indicator") {
			n = firstFailingLine(data, n)
		}
		// An error found at the end of the input (an unclosed [ or {, a
		// quote) is on the last line that holds anything, not past it.
		return fmt.Sprintf("line %d: %s", min(n, lastLine(data)), rest)
	}
	return fmt.Sprintf("line %d: %s", lineWithoutNumber(msg, data), msg)
}

// firstFailingLine is the first line from line from on where the document
// stops parsing: the line at fault of a block-structure error, which the
// library places at the start of the mapping or list it was reading (a key
// indented as a list item, three lines below the list's first "-").
func firstFailingLine(data []byte, from int) int {
	lines := bytes.SplitAfter(data, []byte("\n"))
	lo, hi := max(from, 1), len(lines)
	for lo < hi {
		mid := (lo + hi) / 2
		if parses(bytes.Join(lines[:mid], nil)) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// parses reports whether every document in data parses.
func parses(data []byte) bool {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		switch err := dec.Decode(&n); {
		case errors.Is(err, io.EOF):
			return true
		case err != nil:
			return false
		}
	}
}

// lastLine is the number of the last line of data that is not blank (1
// for a blank document).
func lastLine(data []byte) int {
	lines := bytes.Split(data, []byte("\n"))
	for i := len(lines) - 1; i > 0; i-- {
		if len(bytes.TrimSpace(lines[i])) > 0 {
			return i + 1
		}
	}
	return 1
}

var unknownAnchor = regexp.MustCompile(`^unknown anchor '(.*)' referenced`)

// lineWithoutNumber finds the line of a syntax error the library reports
// with no line: a byte YAML does not allow (a control character, bytes
// that are not UTF-8), an alias to no anchor; otherwise the error is on
// the first line (the library leaves the number out for line 1).
func lineWithoutNumber(msg string, data []byte) int {
	at := -1
	switch m := unknownAnchor.FindStringSubmatch(msg); {
	case m != nil:
		at = bytes.Index(data, []byte("*"+m[1]))
	case strings.Contains(msg, "UTF-8") || strings.Contains(msg, "control characters") || strings.Contains(msg, "Unicode character"):
		at = badByte(data)
	}
	if at < 0 {
		return 1
	}
	return 1 + bytes.Count(data[:at], []byte("\n"))
}

// badByte is the offset of the first byte YAML refuses: one that is not
// UTF-8, or a control character other than tab, line feed and carriage
// return; -1 when there is none.
func badByte(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		if (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || (r >= 0x7f && r <= 0x9f && r != 0x85) || r == 0xfffe || r == 0xffff {
			return i
		}
		i += size
	}
	return -1
}

func tabIndented(data []byte) bool {
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimLeft(line, " ")) > 0 && bytes.TrimLeft(line, " ")[0] == '\t' {
			return true
		}
	}
	return false
}

// goType matches the Go type the decoder names in "cannot unmarshal … into T"
// and "field x not found in type T".
var goType = regexp.MustCompile(`cannot unmarshal !!\w+ (.*) into \S+|field (\S+) not found in type \S+`)

// clean drops the decoder's "yaml: unmarshal errors:" preamble and joins its
// lines, so the message stays on one line, and words what check would have
// caught without the Go type.
func clean(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: unmarshal errors:\n")
	msg = strings.TrimPrefix(msg, "yaml: ")
	lines := strings.Split(msg, "\n")
	for i := range lines {
		lines[i] = goType.ReplaceAllStringFunc(strings.TrimSpace(lines[i]), func(m string) string {
			sub := goType.FindStringSubmatch(m)
			if sub[2] != "" {
				return fmt.Sprintf("unknown setting %q", sub[2])
			}
			return sub[1] + " is not valid here"
		})
	}
	return strings.Join(lines, "; ")
}

// Lines maps the path of an entry to the line where it starts: keys and
// list indexes joined by "/" ("rules/0/action"), and a key's path with a
// trailing "/" to the key's own line ("doctor/"). Checks that run after
// decoding use it to name the line, as the decoder's own errors do.
type Lines map[string]int

// Index maps every entry of a document's root (from Decode) to its line.
func Index(root *yaml.Node) Lines {
	idx := Lines{}
	if root != nil && len(root.Content) > 0 {
		idx.walk(root.Content[0], "")
	}
	return idx
}

func (l Lines) walk(n *yaml.Node, prefix string) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			path := prefix + n.Content[i].Value
			l[path], l[path+"/"] = n.Content[i].Line, n.Content[i].Line
			l.walk(n.Content[i+1], path+"/")
		}
	case yaml.SequenceNode:
		for j, item := range n.Content {
			path := prefix + strconv.Itoa(j)
			l[path] = item.Line
			l.walk(item, path+"/")
		}
	}
}

// At is the line of the entry at the path made of parts ("rules", "0",
// "action"); 0 when the document has no such entry.
func (l Lines) At(parts ...string) int { return l[strings.Join(parts, "/")] }
