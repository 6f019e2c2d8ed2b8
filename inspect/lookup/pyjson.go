package lookup

import (
	"slices"
	"strconv"
	"strings"
)

// The lesson's fingerprint is Python's
// json.dumps(body, sort_keys=True, separators=(",", ":")): names sorted by
// code point at every level, no spaces, every character outside printable
// ASCII escaped (ensure_ascii), integers exact, floats as repr writes them.

// byName is Python's sort_keys: names by code point.
func byName(ms []Member) []Member {
	ms = slices.Clone(ms)
	slices.SortFunc(ms, func(a, b Member) int { return strings.Compare(a.Name, b.Name) })
	return ms
}

// pyNumber writes a literal as json.loads then json.dumps do: an integer
// literal stays an exact int, anything with a fraction or an exponent is a
// float written by repr.
func pyNumber(lit string) string {
	if !strings.ContainsAny(lit, ".eE") {
		if strings.TrimLeft(lit, "-0") == "" {
			return "0"
		}
		return lit
	}
	f, _ := strconv.ParseFloat(lit, 64)
	switch {
	case f > 1.7976931348623157e308:
		return "Infinity"
	case f < -1.7976931348623157e308:
		return "-Infinity"
	case f == 0 && strings.HasPrefix(lit, "-"):
		return "-0.0"
	case f == 0:
		return "0.0"
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	digits, n := shortest(f) // f = 0.digits × 10^n
	e := n - 1
	if e < -4 || e >= 16 {
		m := digits[:1]
		if len(digits) > 1 {
			m += "." + digits[1:]
		}
		es := strconv.Itoa(e)
		if e < 0 {
			es = es[1:]
		}
		if len(es) < 2 {
			es = "0" + es
		}
		if e < 0 {
			return sign + m + "e-" + es
		}
		return sign + m + "e+" + es
	}
	if n <= 0 {
		return sign + "0." + strings.Repeat("0", -n) + digits
	}
	if len(digits) <= n {
		return sign + digits + strings.Repeat("0", n-len(digits)) + ".0"
	}
	return sign + digits[:n] + "." + digits[n:]
}
