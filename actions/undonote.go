package actions

import "github.com/idemctl/idemctl/actions/audit"

import "strings"

// whyReadCap is why a value is left out of a snapshot.
const whyReadCap = "longer than the read cap: never read whole"

// undoNote says why a planned write will not be undoable ("" when it
// will): the log keeps its exact before-image only when it keeps every
// value of the record (a DUMP holds them all, payloads included) and the
// image is within MaxImage. Planning says it before the write runs; the
// intent records the same.
func undoNote(v audit.Values, p *Plan) string {
	var why []string
	if left := v.Left(&p.Before, p.Keyspace); len(left) > 0 {
		why = append(why, "values left out of the log: "+strings.Join(left, "; "))
	}
	if p.img.image == nil {
		w := p.img.why
		if w == "" {
			w = "no before-image was read"
		}
		why = append(why, w)
	}
	return strings.Join(why, "; ")
}
