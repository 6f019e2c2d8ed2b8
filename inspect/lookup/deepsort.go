package lookup

import (
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Powertools (TypeScript) hashes JSON.stringify(deepSort(selection)):
// every object's names sorted case-insensitively (by their lower case,
// compared as JavaScript compares strings), arrays kept in order. The
// sorted object is built anew, so JavaScript still writes its
// integer-like names first (jsOrder).

// deepSort returns v with every object's members in Powertools' order.
func deepSort(v Value) Value {
	switch v.Kind {
	case Array:
		out := v
		out.Items = make([]Value, len(v.Items))
		for i, it := range v.Items {
			out.Items[i] = deepSort(it)
		}
		return out
	case Object:
		out := v
		out.Members = make([]Member, len(v.Members))
		for i, m := range jsOrder(v.Members) {
			out.Members[i] = Member{Name: m.Name, Value: deepSort(m.Value)}
		}
		sort.SliceStable(out.Members, func(i, j int) bool {
			return jsLess(strings.ToLower(out.Members[i].Name), strings.ToLower(out.Members[j].Name))
		})
		return out
	}
	return v
}

// numLit is a number a search must hand back as written: Python keeps an
// integer exact and a float a float, which a double would blur. Selections
// pass it through; functions and comparisons do not see it as a number.
type numLit string

// toAny is v in the shapes a JMESPath search reads: numbers as JavaScript
// holds them (doubles), or, with lits, as written (Python).
func toAny(v Value, lits ...bool) any {
	switch v.Kind {
	case Bool:
		return v.Bool
	case Number:
		if len(lits) > 0 && lits[0] {
			return numLit(v.Lit)
		}
		f, _ := strconv.ParseFloat(v.Lit, 64)
		return f
	case String:
		return v.Str
	case Array:
		out := make([]any, len(v.Items))
		for i, it := range v.Items {
			out[i] = toAny(it, lits...)
		}
		return out
	case Object:
		out := make(map[string]any, len(v.Members))
		for _, m := range v.Members {
			out[m.Name] = toAny(m.Value, lits...)
		}
		return out
	}
	return nil
}

// fromAny turns a search result back into a Value. A map has lost the
// order its names were written in: they come back in byte order, which
// matters only to names equal but for case (deepSort keeps those as
// found).
func fromAny(x any) Value {
	switch t := x.(type) {
	case bool:
		return Value{Kind: Bool, Bool: t}
	case float64:
		return Value{Kind: Number, Lit: strconv.FormatFloat(t, 'g', -1, 64)}
	case int:
		return Value{Kind: Number, Lit: strconv.Itoa(t)}
	case numLit:
		return Value{Kind: Number, Lit: string(t)}
	case string:
		return Value{Kind: String, Str: t}
	case []any:
		out := Value{Kind: Array, Items: make([]Value, len(t))}
		for i, it := range t {
			out.Items[i] = fromAny(it)
		}
		return out
	case map[string]any:
		names := make([]string, 0, len(t))
		for n := range t {
			names = append(names, n)
		}
		slices.Sort(names)
		out := Value{Kind: Object, Members: make([]Member, len(names))}
		for i, n := range names {
			out.Members[i] = Member{Name: n, Value: fromAny(t[n])}
		}
		return out
	}
	return Value{Kind: Null}
}
