package streams

import (
	"strings"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
	"github.com/idemctl/idemctl/ui/common"
)

// The entry writes' texts: the dialog's form hints and preview, the
// Streams screen's help and footer keys.

// FormHint says what the form's fields mean for kind.
func FormHint(kind write.Kind) string {
	switch kind {
	case write.KindRetry:
		return "Mode: claim hands each entry to the consumer To, its delivery count +1 · claim-justid: the count kept · redeliver: the same consumer, idle reset to 0 (To unused)"
	case write.KindDeadLetter:
		return "To: each entry is copied there with idemctl.* fields saying where from, then acknowledged; {stream} is the entry's stream"
	case write.KindAck:
		return "ack acknowledges each entry (XACK): it leaves the pending list, its work known to be done"
	}
	return ""
}

// PlanLine is one entry's change, or why it cannot be written, wrapped
// under its ID to width.
func PlanLine(s common.Styles, width int, id string, p *actions.Plan) string {
	prefix := "  " + inspect.Sanitize(id) + "  "
	if p.Refused != "" {
		return common.WrapHang(prefix, s.Error.Render(string(p.Outcome))+": "+inspect.Sanitize(units.OneLine(p.Refused)), width)
	}
	parts := make([]string, 0, len(p.Changes))
	for _, c := range p.Changes {
		parts = append(parts, changeText(c))
	}
	return common.WrapHang(prefix, strings.Join(parts, " · "), width)
}

// changeText is one change of an entry in words: "consumer c1 → x",
// "idle 10m00s → 0s", "pending to "c1" → acknowledged (XACK)".
func changeText(c write.Change) string {
	f, before, after := inspect.Sanitize(c.Field), inspect.Sanitize(c.Before), inspect.Sanitize(c.After)
	switch {
	case strings.HasPrefix(f, "(") && before == "(none)":
		return after
	case strings.HasPrefix(f, "(") && f != "(idle)":
		return before + " → " + after
	}
	return strings.Trim(f, "()") + " " + before + " → " + after
}

// writeHelp are the footer's write keys on the Streams screen: on,
// or said off with why; none on the groups with nothing marked (they
// act on marks there).
func (st *Screen) writeHelp() []common.KeyBinding {
	k := st.Keys
	if st == nil || st.level == LevelGroups && len(st.marks) == 0 {
		return nil
	}
	if !st.CanWrite() {
		return []common.KeyBinding{common.WritesOff(st.OffNote(true), k.Retry, k.Ack, k.DeadLetter, common.Relabel(k.Mark, "", false))}
	}
	mark := common.Relabel(k.Mark, "mark", true)
	if st.level == LevelEntry {
		return []common.KeyBinding{k.Retry, k.Ack, k.DeadLetter, mark}
	}
	return []common.KeyBinding{mark, k.Retry, k.Ack, k.DeadLetter}
}
