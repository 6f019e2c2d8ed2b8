package snapshot

import (
	"math/rand/v2"
	"testing"

	"github.com/idemctl/idemctl/inspect/glob"
)

// TestStarMatchAgreesWithMatchPattern checks the snapshot's quick pattern
// match against the glob walk, on patterns of stars and literals (and a
// few it leaves to the walk), over keys from a small alphabet so that
// parts repeat and overlap.
func TestStarMatchAgreesWithMatchPattern(t *testing.T) {
	patterns := []string{"", "*", "**", "a", "ab", "a*", "*a", "*a*", "a*b", "a*a", "aa*aa", "*ab*ba*", "a**b",
		"atlasmart:ch23:idem:*", "idem:*:resp", "a*b*a*b", "b*", "a?b", "[ab]*", `a\*b`, "*]"}
	keys := []string{"", "a", "b", "ab", "ba", "aa", "aaa", "aba", "abab", "aabaa", "*", "a*b", "]",
		"atlasmart:ch23:idem:customer-1:POST:/orders:req-1", "atlasmart:ch23:idem", "idem:x:resp", "idem::resp", "idem:resp"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		k := make([]byte, rng.IntN(9))
		for i := range k {
			k[i] = "ab*"[rng.IntN(3)]
		}
		keys = append(keys, string(k))
	}
	for range 300 {
		p := make([]byte, rng.IntN(7))
		for i := range p {
			p[i] = "ab*"[rng.IntN(3)]
		}
		patterns = append(patterns, string(p))
	}
	for _, p := range patterns {
		m := newStarMatch(p)
		for _, k := range keys {
			if got, want := m.match(k), glob.Match(p, k); got != want {
				t.Errorf("pattern %q, key %q: %v, MatchPattern says %v", p, k, got, want)
			}
		}
	}
}
