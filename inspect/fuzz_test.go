package inspect

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// Fuzz targets for everything that parses bytes from Redis. Their seed
// corpora run with every `go test`; .ci/test also fuzzes each for a few seconds.

func FuzzDecodeRecordJSON(f *testing.F) {
	for _, seed := range []string{
		`{"status":"INPROGRESS","expiration":1764676800,"in_progress_expiration":1764676800123,"validation":"abc"}`,
		`{"status":"COMPLETED","data":"{\"a\":1}","expiration":1}`,
		`{"Status":"pending","CreatedAt":"2026-12-02T12:00:00Z","Response":{"StatusCode":201,"Body":"eyJvayI6dHJ1ZX0="}}`,
		`{"status":`, `[]`, `null`, `{"status":{"nested":[1,2,{"x":"y"}]}}`,
		strings.Repeat(`{"a":`, 200) + `1` + strings.Repeat(`}`, 200),
		"{\"status\":\"\x1b]52;c;x\x07\"}", "\xff\xfe{", `{"status":1e999}`,
	} {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	schemas := []*Schema{}
	for _, n := range []string{"powertools", "gopotency", "node-idempotency", "marker-lock"} {
		s, _ := Preset(n)
		schemas = append(schemas, s)
	}
	f.Fuzz(func(t *testing.T, value string, cut bool) {
		for _, s := range schemas {
			ks, err := NewKeyspace(KeyspaceSpec{Schema: s, Match: "*"})
			if err != nil {
				t.Fatal(err)
			}
			o := &observed{key: "k", pttl: 1000, mem: 10, typ: TypeString}
			decodeJSON(s, []byte(value), cut, &o.f)
			r := classify(ks, o, 1_800_000_000_000)
			out := AppendJSON(nil, &r)
			if !json.Valid(out) {
				t.Fatalf("invalid JSON output %q", out)
			}
			if int(r.State) >= int(numStates) {
				t.Fatalf("state %d out of range", r.State)
			}
		}
	})
}

// invisibleRunes are code points that are invisible or reorder text: each
// must come out escaped wherever it stands (variation selectors: wherever
// they stand alone).
var invisibleRunes = []rune{
	0x00ad, 0x034f, 0x061c, 0x115f, 0x1160, 0x17b4, 0x17b5, 0x180e, 0x200b, 0x200c, 0x200d, 0x200e,
	0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2028, 0x2029, 0x2060, 0x2061, 0x2064, 0x2066,
	0x2067, 0x2068, 0x2069, 0x206a, 0x206f, 0x3164, 0xfeff, 0xffa0, 0xfff9, 0xfffa, 0xfffb, 0x00a0,
	0x2000, 0x2007, 0x200a, 0x202f, 0x205f, 0x3000, 0x1680, 0x110bd, 0x1bca0, 0x1bca3, 0x1d173,
	0x1d17a, 0xe0001, 0xe0020, 0xe0041, 0xe007f, 0xfe00, 0xfe0f, 0xe0100, 0xe01ef, 0x180b, 0x180f,
	0xfffe, 0xffff, 0xfdd0,
}

func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"plain", "\x1b[31m", "\x1b]52;c;ZXZpbA==\x07", "\x9b\u202e\u200b", "\xff\xfe", "a\nb\tc\x00",
		`\x1b[31m`, `\\`, "\u2764\ufe0f\ufe0f"} {
		f.Add(s)
	}
	for _, r := range invisibleRunes {
		f.Add(string(r))
		f.Add("a" + string(r) + "b")
		f.Add(" " + string(r) + `\`)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Sanitize(s)
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out of %q", s)
		}
		prev := rune(-1)
		for _, r := range out {
			if escapedRune(prev, r) {
				t.Fatalf("raw %U survived in %q", r, out)
			}
			for _, bad := range invisibleRunes {
				if r == bad && !unicode.Is(unicode.Variation_Selector, r) {
					t.Fatalf("invisible %U survived in %q", r, out)
				}
			}
			prev = r
			if r == '\\' {
				prev = -1
			}
		}
		if back, err := unsanitize(out); err != nil || back != s {
			t.Fatalf("%q → %q decodes as %q (%v): escaped and literal text must differ", s, out, back, err)
		}
		js := AppendJSONString(nil, s)
		if !json.Valid(js) {
			t.Fatalf("invalid JSON string %q", js)
		}
		for _, r := range string(js) {
			if unsafeRune(r) {
				t.Fatalf("raw %U in JSON %q", r, js)
			}
		}
	})
}

// unsanitize decodes Sanitize's escapes, so a test can check that the
// escaped text names exactly the original bytes.
func unsanitize(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 >= len(s) {
			return "", fmt.Errorf("a lone backslash at the end")
		}
		i++
		n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[s[i]]
		switch s[i] {
		case '\\':
			b.WriteByte('\\')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'x', 'u', 'U':
			if i+n >= len(s) {
				return "", fmt.Errorf("a short escape")
			}
			v, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32)
			if err != nil {
				return "", err
			}
			if s[i] == 'x' {
				b.WriteByte(byte(v))
			} else {
				b.WriteRune(rune(v))
			}
			i += n
		default:
			return "", fmt.Errorf("unknown escape \\%c", s[i])
		}
	}
	return b.String(), nil
}
