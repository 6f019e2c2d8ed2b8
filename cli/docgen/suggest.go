package docgen

import (
	"strings"

	"github.com/spf13/cobra"
)

// Suggest is the commands of c closest to a mistyped name: those
// it starts, else those at the least edit distance (a swap of two letters
// counts one, so sacn is scan, not man), at most 2 and short of the whole
// name.
func Suggest(c *cobra.Command, name string) []string {
	name = strings.ToLower(name)
	var prefixed, near []string
	best := 3
	for _, sub := range c.Commands() {
		if !sub.IsAvailableCommand() && sub.Name() != "help" {
			continue
		}
		if len(name) > 1 && strings.HasPrefix(sub.Name(), name) {
			prefixed = append(prefixed, sub.Name())
			continue
		}
		switch d := editDistance(name, sub.Name()); {
		case d > 2 || d >= len(sub.Name()): // not a typo of it: another word
		case d < best:
			best, near = d, []string{sub.Name()}
		case d == best:
			near = append(near, sub.Name())
		}
	}
	if len(prefixed) > 0 {
		return prefixed
	}
	return near
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and swaps of adjacent letters, one each.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}
