package yamldoc

import (
	"bytes"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

type inner struct {
	Count int     `yaml:"count"`
	Ratio float64 `yaml:"ratio"`
	On    bool    `yaml:"on"`
}

type doc struct {
	Name   string            `yaml:"name,omitempty"`
	Inner  inner             `yaml:"inner"`
	Items  []inner           `yaml:"items"`
	Named  map[string]*inner `yaml:"named"`
	Ports  map[int]string    `yaml:"ports"`
	Extra  any               `yaml:"extra"`
	Plain  string            // no tag: the decoder reads "plain"
	Hidden string            `yaml:"-"`
	secret string
}

// What the decoder accepts, the check accepts, and the values arrive.
func TestDecodeAccepts(t *testing.T) {
	src := "name: 42\ninner: {count: 1e3, ratio: 0.5, on: yes}\nitems: [{count: 2}, {on: true}]\n" +
		"named:\n  a: &a {count: 3}\n  b:\n    <<: [*a]\n    on: true\n  c:\n" +
		"ports: {6379: main}\nextra: {anything: [goes]}\nplain: p\n"
	var d doc
	root, err := Decode([]byte(src), &d)
	if err != nil {
		t.Fatal(err)
	}
	if root == nil || d.Name != "42" || d.Inner.Count != 1000 || d.Inner.Ratio != 0.5 || !d.Inner.On ||
		len(d.Items) != 2 || d.Named["b"].Count != 3 || !d.Named["b"].On || d.Named["c"] != nil ||
		d.Ports[6379] != "main" || d.Plain != "p" {
		t.Errorf("decoded %+v", d)
	}
	if _, err := Decode([]byte("name: a\n---\n"), &doc{}); err != nil {
		t.Errorf("a trailing empty document: %v", err)
	}
	for _, empty := range []string{"", "# only a comment\n", "---\n"} {
		var e doc
		root, err := Decode([]byte(empty), &e)
		if err != nil || root != nil {
			t.Errorf("%q: root %v, err %v; want an empty document", empty, root, err)
		}
	}
}

func TestDecodeRefuses(t *testing.T) {
	cases := map[string]string{
		"hidden: x\n":                        `line 1: unknown setting "hidden" at the top level (known: name, inner, items, named, ports, extra, plain)`,
		"secret: x\n":                        `line 1: unknown setting "secret" at the top level`,
		"inner: {cont: 1}\n":                 `line 1: unknown setting "cont" under inner (did you mean count? known: count, ratio, on)`,
		"inner: {ratio: half}\n":             `line 1: inner.ratio: "half" is not a number`,
		"inner: {count: 0.5}\n":              `line 1: inner.count: "0.5" is not a whole number`,
		"items:\n  - {on: 2}\n":              `line 2: items[0].on: "2" is not true or false`,
		"named: {a: {x: 1}}\n":               `line 1: unknown setting "x" under named.a`,
		"ports: {main: 6379}\n":              `line 1: ports: "main" is not a whole number`,
		"ports: {[1]: x}\n":                  `line 1: ports: want a plain name as the key, got a list`,
		"named:\n  b:\n    <<: {cuont: 1}\n": `line 3: unknown setting "cuont" under named.b`,
		"name: [a]\n":                        `line 1: name: want text, got a list`,
		"inner: {count: {a: 1}}\n":           `line 1: inner.count: want a whole number, got a mapping`,
		"name: a\n---\nname: b\n":            `line 3: a second YAML document (after ---)`,
		"name: a\n---\n[unclosed\n":          `did not find expected`,
	}
	for src, want := range cases {
		var d doc
		_, err := Decode([]byte(src), &d)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %s", src, err, want)
		}
	}
}

// The backstop words the decoder's own errors without their Go types.
func TestCleanDropsGoTypes(t *testing.T) {
	dec := yaml.NewDecoder(bytes.NewReader([]byte("inner:\n  on: maybe\n  bogus: 1\n")))
	dec.KnownFields(true)
	var d doc
	err := dec.Decode(&d)
	if err == nil {
		t.Fatal("the decoder accepted a bad document")
	}
	got := clean(err)
	want := "line 2: `maybe` is not valid here; line 3: unknown setting \"bogus\""
	if got != want {
		t.Errorf("clean(%q)\n = %q\nwant %q", err, got, want)
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"count", "count", 0}, {"cuont", "count", 2}, {"prest", "preset", 1}, {"", "abc", 3}, {"url", "mode", 4}} {
		if got := distance(tc.a, tc.b); got != tc.d {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
	}
}

// A syntax error names the line at fault, counted from 1, whichever part
// of the YAML library found it: the parser counts from 0 (an unclosed { on
// line 2 was "line 1"), and leaves the number out on the first line.
func TestSyntaxErrorsNameTheLine(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"unclosed { on line 2", "name: a\ninner: {count: 1\nplain: p\n", "line 2: did not find expected ',' or '}'"},
		{"unclosed [ on line 3", "name: a\nplain: p\nitems: [{count: 1}\nextra: 1\n", "line 3: did not find expected ',' or ']'"},
		{"a key where a list item belongs", "items:\n  - {count: 1}\n  - {count: 2}\n  name: x\n", "line 4: did not find expected '-' indicator"},
		{"a line indented less than its block", "name: a\ninner:\n  count: 1\n on: true\n", "line 4: did not find expected key"},
		{"a key indented between two blocks", "named:\n  a:\n    count: 1\n    on: true\n   b: {}\nplain: p\n", "line 5: did not find expected key"},
		{"a list item after a deeper list", "items:\n  - count: 1\n    on: true\n  - count: 2\n plain: p\n", "line 5: did not find expected key"},
		{"a list item in a mapping", "name: a\nplain: p\n- x\n", "line 3: did not find expected key"},
		{"an undefined tag handle", "name: a\nplain: !x!y p\n", "line 2: found undefined tag handle"},
		{"a duplicate directive", "%YAML 1.1\n%YAML 1.1\n---\nname: a\n", "line 2: found duplicate %YAML directive"},
		{"tab indent (scanner)", "name: a\ninner:\n\tcount: 1\n", "line 3: found character that cannot start any token (a tab indents a line: YAML indents with spaces)"},
		{"unclosed quote (scanner)", "name: a\nplain: 'p\n", "line 2: found unexpected end of stream"},
		{"two colons (scanner)", "name: a\nplain: p: q\n", "line 2: mapping values are not allowed in this context"},
		{"two colons on line 1", "name: a: b\n", "line 1: mapping values are not allowed in this context"},
		{"unclosed { in the second document", "name: a\n---\nname: b\ninner: {count: 1\n", "line 4: did not find expected ',' or '}'"},
		{"unclosed [ at the end", "name: a\nitems: [\n\n", "line 2: did not find expected node content"},
		{"unclosed { on line 1 alone", "{name: a\n", "line 1: did not find expected ',' or '}'"},
		{"unknown alias", "name: a\nplain: p\nextra: *nope\n", "line 3: unknown anchor 'nope' referenced"},
		{"control character", "name: a\nplain: p\nextra: \x01\n", "line 3: control characters are not allowed"},
		{"not UTF-8", "name: a\nplain: \xff\n", "line 2: invalid leading UTF-8 octet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode([]byte(tc.src), &doc{})
			if err == nil || err.Error() != tc.want {
				t.Errorf("%q:\n got %v\nwant %s", tc.src, err, tc.want)
			}
		})
	}
}
