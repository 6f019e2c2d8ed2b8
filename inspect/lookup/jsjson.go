package lookup

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
)

// What JavaScript's JSON.parse then JSON.stringify make of a document:
// numbers become doubles, written the way Number#toString writes them; an
// object's members come out with the integer-like names first, in
// ascending order, then the others in the order written; strings escape
// only quotes, backslashes and control characters.

// arrayIndex reports whether name is an array index to JavaScript (a
// canonical integer below 2^32-1): such names come first in an object.
func arrayIndex(name string) (uint64, bool) {
	if name == "" || len(name) > 10 || len(name) > 1 && name[0] == '0' {
		return 0, false
	}
	n, err := strconv.ParseUint(name, 10, 64)
	if err != nil || n >= 1<<32-1 {
		return 0, false
	}
	return n, true
}

// jsOrder is the order JavaScript keeps an object's members in.
func jsOrder(ms []Member) []Member {
	var idx, rest []Member
	for _, m := range ms {
		if _, ok := arrayIndex(m.Name); ok {
			idx = append(idx, m)
		} else {
			rest = append(rest, m)
		}
	}
	if idx == nil {
		return ms
	}
	slices.SortFunc(idx, func(a, b Member) int {
		x, _ := arrayIndex(a.Name)
		y, _ := arrayIndex(b.Name)
		return int(x) - int(y)
	})
	return append(idx, rest...)
}

// jsNumber writes a JSON number literal as JavaScript's Number#toString
// writes the double JSON.parse reads from it.
func jsNumber(lit string) string {
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && f == 0 {
		return "0"
	}
	if f == 0 {
		return "0" // -0 too
	}
	if f > 1.7976931348623157e308 || f < -1.7976931348623157e308 {
		return "null" // Infinity: JSON.stringify writes null
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	digits, n := shortest(f)
	k := len(digits)
	switch {
	case k <= n && n <= 21:
		return sign + digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		return sign + digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		return sign + "0." + strings.Repeat("0", -n) + digits
	}
	e := n - 1
	es := "+" + strconv.Itoa(e)
	if e < 0 {
		es = strconv.Itoa(e)
	}
	if k == 1 {
		return sign + digits + "e" + es
	}
	return sign + digits[:1] + "." + digits[1:] + "e" + es
}

// shortest is the shortest digits that read back as f (f > 0), and n such
// that f = 0.digits × 10^n.
func shortest(f float64) (string, int) {
	s := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±x
	mant, exp, _ := strings.Cut(s, "e")
	x, _ := strconv.Atoi(exp)
	return strings.Replace(mant, ".", "", 1), x + 1
}

// jsLess is JavaScript's a < b on strings: by UTF-16 code units.
func jsLess(a, b string) bool {
	x, y := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	return slices.Compare(x, y) < 0
}
