package actions

import (
	"fmt"
	"strings"
)

// Tally counts results by outcome.
type Tally map[Outcome]int

// Summary counts outcomes.
func Summary(rs []Result) Tally {
	m := Tally{}
	for _, r := range rs {
		m[r.Outcome]++
	}
	return m
}

// String is the one summary line both faces print: the counts that are
// not zero, in the order of Outcomes ("2 applied, 1 conflict"); "" for
// none.
func (t Tally) String() string {
	var parts []string
	for _, o := range Outcomes {
		if t[o] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", t[o], o))
		}
	}
	return strings.Join(parts, ", ")
}
