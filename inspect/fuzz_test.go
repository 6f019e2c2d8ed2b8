package inspect

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// Fuzz targets for everything that parses bytes from Redis. Their seed
// corpora run with every `go test`; .ci/run also fuzzes each for a few seconds.

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

func FuzzKeyTemplate(f *testing.F) {
	f.Add("atlasmart:ch23:idem:{principal}:{endpoint...}:{idem_key}", "atlasmart:ch23:idem:c:POST:/orders:r")
	f.Add("{fn}#{digest}", "a.b#c+/=")
	f.Add("{a}:{b}", "::::")
	f.Add("x{", "x")
	f.Fuzz(func(t *testing.T, tpl, key string) {
		tp, err := ParseTemplate(tpl)
		if err != nil {
			return
		}
		groups, ok := tp.Match(key)
		if !ok {
			return
		}
		if len(groups) != len(tp.Names()) {
			t.Fatalf("%d groups for %d names", len(groups), len(tp.Names()))
		}
		for _, g := range groups {
			if g == "" || !strings.Contains(key, g) {
				t.Fatalf("capture %q is not a non-empty part of %q", g, key)
			}
		}
	})
}

func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"plain", "\x1b[31m", "\x1b]52;c;ZXZpbA==\x07", "\x9b\u202e\u200b", "\xff\xfe", "a\nb\tc\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Sanitize(s)
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out of %q", s)
		}
		for _, r := range out {
			if r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || unsafeRune(r) {
				t.Fatalf("raw control %U survived in %q", r, out)
			}
		}
		js := AppendJSONString(nil, s)
		if !json.Valid(js) {
			t.Fatalf("invalid JSON string %q", js)
		}
		for _, r := range string(js) {
			if r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || unsafeRune(r) {
				t.Fatalf("raw control %U in JSON %q", r, js)
			}
		}
	})
}

func FuzzMatchPattern(f *testing.F) {
	f.Add("atlasmart:*", "atlasmart:x")
	f.Add("h[a-b]llo\\*", "hallo*")
	f.Add("[", "[")
	f.Fuzz(func(t *testing.T, pattern, key string) {
		if MatchPattern(pattern, key) && !strings.ContainsAny(pattern, "*?[\\") && pattern != key {
			t.Fatalf("literal pattern %q matched %q", pattern, key)
		}
	})
}
