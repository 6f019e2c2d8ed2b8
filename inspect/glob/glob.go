// Package glob matches keys against Redis glob patterns, as SCAN MATCH
// does: what a keyspace's or a ledger's match selects when the server is
// not the one matching (a snapshot file, a stream's keys, a write's
// check).
//
// Floor 0 of ARCHITECTURE.md, a foundation: it imports nothing of
// idemctl's.
package glob

// Match reports whether key matches a Redis glob pattern (as in SCAN
// MATCH): * ? [abc] [^a-z] and \ escapes. Iterative, so hostile keys cannot
// blow the stack.
func Match(pattern, key string) bool {
	p, k := 0, 0
	starP, starK := -1, 0
	for k < len(key) {
		if p < len(pattern) {
			switch c := pattern[p]; c {
			case '*':
				starP, starK = p, k
				p++
				continue
			case '?':
				p++
				k++
				continue
			case '[':
				if end, ok := matchClass(pattern, p, key[k]); ok {
					p, k = end, k+1
					continue
				}
			case '\\':
				if p+1 < len(pattern) && pattern[p+1] == key[k] {
					p, k = p+2, k+1
					continue
				}
			default:
				if c == key[k] {
					p++
					k++
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		starK++
		p, k = starP+1, starK
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// matchClass matches c against the [...] class starting at pattern[p]; it
// returns the index after the class.
func matchClass(pattern string, p int, c byte) (int, bool) {
	i := p + 1
	neg := i < len(pattern) && pattern[i] == '^'
	if neg {
		i++
	}
	matched := false
	for i < len(pattern) && pattern[i] != ']' {
		lo := pattern[i]
		if lo == '\\' && i+1 < len(pattern) {
			i++
			lo = pattern[i]
		}
		if i+2 < len(pattern) && pattern[i+1] == '-' && pattern[i+2] != ']' {
			hi := pattern[i+2]
			if lo > hi {
				lo, hi = hi, lo
			}
			if c >= lo && c <= hi {
				matched = true
			}
			i += 3
			continue
		}
		if c == lo {
			matched = true
		}
		i++
	}
	if i >= len(pattern) {
		return 0, false // unclosed: treat '[' literally elsewhere
	}
	return i + 1, matched != neg
}
