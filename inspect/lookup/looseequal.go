package lookup

import (
	"strconv"
	"strings"
)

// looseEqual is deep-equal's default (non-strict) comparison of two JSON
// values: objects and arrays member by member whatever the order of the
// names, primitives with JavaScript's ==, so 1 equals "1" and true 1.
func looseEqual(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !looseEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !looseEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	if _, ok := b.(map[string]any); ok {
		return false
	}
	if _, ok := b.([]any); ok {
		return false
	}
	return jsLooseEq(a, b)
}

// jsLooseEq is JavaScript's == on JSON primitives (nil is null).
func jsLooseEq(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if s, ok := a.(string); ok {
		if t, ok := b.(string); ok {
			return s == t
		}
	}
	x, okx := jsNumberOf(a)
	y, oky := jsNumberOf(b)
	return okx && oky && x == y
}

// jsNumberOf is Number(v) for a string, a boolean or a number.
func jsNumberOf(v any) (float64, bool) {
	switch t := v.(type) {
	case float64:
		return t, true
	case bool:
		if t {
			return 1, true
		}
		return 0, true
	case string:
		s := strings.TrimSpace(t)
		if s == "" {
			return 0, true
		}
		f, err := strconv.ParseFloat(s, 64)
		return f, err == nil
	}
	return 0, false
}
