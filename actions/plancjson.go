package actions

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/idemctl/idemctl/inspect"
)

// cjsonKeeps refuses a JSON write that would damage the record. The JSON
// script decodes and re-encodes the whole document with the server's cjson,
// which prints numbers with 14 significant digits (a microsecond timestamp
// or a 64-bit id would be silently rounded) and turns an empty array into
// an object. A value cut by the read cap cannot be checked here.
func cjsonKeeps(fs []inspect.Field, pairs []string) error {
	var docs []string
	if len(fs) == 1 && !fs[0].Truncated {
		docs = append(docs, fs[0].Value)
	}
	for i := 1; i < len(pairs); i += 2 {
		if !isMarker(pairs[i]) {
			docs = append(docs, pairs[i])
		}
	}
	for _, doc := range docs {
		dec := json.NewDecoder(strings.NewReader(doc))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			continue // not JSON: the script refuses it itself
		}
		if where, ok := cjsonRewrites("", v); ok {
			return fmt.Errorf("the server's JSON encoder would rewrite %s (cjson keeps 14 significant digits and turns [] into {}): "+
				"writing this record would corrupt it; delete it (expire --ttl 0) instead, or repair it by hand", where)
		}
	}
	return nil
}

// cjsonRewrites finds a value cjson would not write back as it was.
func cjsonRewrites(path string, v any) (string, bool) {
	switch x := v.(type) {
	case json.Number:
		if significantDigits(string(x)) > 14 {
			return orRoot(path) + " = " + string(x), true
		}
	case []any:
		if len(x) == 0 {
			return orRoot(path) + " = []", true
		}
		for i, e := range x {
			if w, ok := cjsonRewrites(fmt.Sprintf("%s[%d]", path, i), e); ok {
				return w, true
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			sub := k
			if path != "" {
				sub = path + "." + k
			}
			if w, ok := cjsonRewrites(sub, x[k]); ok {
				return w, true
			}
		}
	}
	return "", false
}

func orRoot(path string) string {
	if path == "" {
		return "the value"
	}
	return inspect.Sanitize(path)
}

// significantDigits counts a JSON number's significant decimal digits.
func significantDigits(num string) int {
	if i := strings.IndexAny(num, "eE"); i >= 0 {
		num = num[:i]
	}
	digits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, num)
	return len(strings.TrimRight(strings.TrimLeft(digits, "0"), "0"))
}
