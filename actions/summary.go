package actions

import (
	"fmt"
	"strings"

	"github.com/idemctl/idemctl/actions/write"
)

// Tally counts results by outcome.
type Tally map[write.Outcome]int

// NotReplicated counts, in a Tally, the applied writes the replicas did
// not acknowledge in time (they are also counted as applied).
const NotReplicated write.Outcome = "not_replicated"

// Summary counts outcomes.
func Summary(rs []Result) Tally {
	m := Tally{}
	for _, r := range rs {
		m[r.Outcome]++
		if r.Unreplicated() {
			m[NotReplicated]++
		}
	}
	return m
}

// String is the one summary line both faces print: the counts that are
// not zero, in the order of Outcomes ("2 applied, 1 conflict"); "" for
// none.
func (t Tally) String() string {
	var parts []string
	for _, o := range write.Outcomes {
		if t[o] > 0 {
			part := fmt.Sprintf("%d %s", t[o], o)
			if o == write.Applied && t[NotReplicated] > 0 {
				part += fmt.Sprintf(" (%d not replicated)", t[NotReplicated])
			}
			parts = append(parts, part)
		}
	}
	return strings.Join(parts, ", ")
}
