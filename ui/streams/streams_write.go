package streams

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
	istreams "github.com/idemctl/idemctl/inspect/streams"
	"github.com/idemctl/idemctl/ui/common"
)

// Writes on pending entries from the Streams screen: space marks entries
// (a all in view, u unmarks), T retries, A acks, D dead-letters them
// through the write dialog, as the record writes go: the form (a reason; a
// retry's mode and recovery consumer, a dead-letter's stream), the plan
// read from the server, one line per entry, the typed confirmation, the
// executor's guarded run, the tally. The entries go as the operator saw
// them (consumer and delivery count): one that moved since is a conflict.

// EntryWritesHint is what the Streams screen's write keys do.
const EntryWritesHint = "T retries, A acks, D dead-letters pending entries (space marks them)"

// entryKey names a pending entry across re-reads.
type entryKey struct {
	stream, group inspect.Text
	id            string
}

func keyOf(e istreams.PendingEntry) entryKey { return entryKey{e.Stream, e.Group, e.ID} }

// entryMarks are the marked entries by entry.
type entryMarks map[entryKey]Mark

// Mark is a pending entry a write takes, as last read, and the
// keyspace it was read in (its recovery consumer and dead-letter stream).
type Mark struct {
	Space string
	Entry istreams.PendingEntry
}

// isEntryWriteKey is a marking or write key of the Streams screen, on or
// off: off, it says why.
func isEntryWriteKey(k *common.KeyMap, msg tea.KeyPressMsg) bool {
	for _, b := range []key.Binding{k.Mark, k.MarkAll, k.Unmark, k.Retry, k.Ack, k.DeadLetter} {
		if slices.Contains(b.Keys(), msg.String()) {
			return true
		}
	}
	return false
}

// toggleMark is space: the entry under the cursor (and on to the
// next, so space marks a run), or the entry shown.
func (st *Screen) toggleMark() {
	switch st.level {
	case LevelGroups:
		st.Status = "open a group (enter) to mark its pending entries"
	case LevelEntry:
		st.marks.toggle(st.open.space, st.entryRow)
	default:
		es := st.entries()
		if len(es) == 0 {
			st.Status = "no pending entry to mark here"
			return
		}
		st.entrySel = min(st.entrySel, len(es)-1)
		st.marks.toggle(st.open.space, es[st.entrySel])
		st.entrySel = min(st.entrySel+1, len(es)-1)
	}
}

// toggle marks e, read in keyspace space, or unmarks it.
func (ms *entryMarks) toggle(space string, e istreams.PendingEntry) {
	k := keyOf(e)
	if _, ok := (*ms)[k]; ok {
		delete(*ms, k)
		return
	}
	if *ms == nil {
		*ms = entryMarks{}
	}
	(*ms)[k] = Mark{Space: space, Entry: e}
}

// markAll is a: every entry the filters keep in the open group, or
// none of them when they all are marked already.
func (st *Screen) markAll() {
	if st.level != LevelGroup {
		st.Status = "a marks every pending entry of the group shown: open a group (enter) first"
		return
	}
	es := st.entries()
	all := len(es) > 0
	for _, e := range es {
		_, ok := st.marks[keyOf(e)]
		all = all && ok
	}
	for _, e := range es {
		if all {
			delete(st.marks, keyOf(e))
		} else if _, ok := st.marks[keyOf(e)]; !ok {
			st.marks.toggle(st.open.space, e)
		}
	}
}

func (st *Screen) unmarkAll() {
	st.Status = "nothing was marked (space marks an entry, a all in view)"
	if n := len(st.marks); n > 0 {
		st.Status = "unmarked " + common.Count(n)
	}
	st.marks = nil
}

// refreshMarks keeps the marks of entries still pending, as read now: a
// write takes them as the screen shows them.
func (st *Screen) refreshMarks() {
	for k, mk := range st.marks {
		if e, ok := pendingIn(st.reps, mk.Space, k); ok {
			mk.Entry = e
			st.marks[k] = mk
		} else {
			delete(st.marks, k)
		}
	}
}

// pendingIn is an entry as last read (reps); ok is false when it is not listed.
func pendingIn(reps []istreams.Report, space string, k entryKey) (e istreams.PendingEntry, ok bool) {
	_, g := findGroup(reps, groupID{space: space, stream: k.stream, group: k.group, valid: true})
	if g == nil {
		return e, false
	}
	for _, e := range g.Entries {
		if e.ID == k.id {
			return e, true
		}
	}
	return e, false
}

// refreshEntryRow updates the entry shown from a re-read; one no longer
// pending (written, or acknowledged by its consumer) goes back to the list.
func (st *Screen) refreshEntryRow() {
	if e, ok := pendingIn(st.reps, st.open.space, keyOf(st.entryRow)); ok {
		st.entryRow = e
		return
	}
	if g := st.group(); g == nil || g.Truncated {
		return // not read this time: the row stays as it was
	}
	st.level, st.entry, st.entryErr = LevelGroup, nil, ""
	st.Status = "entry " + inspect.Sanitize(st.entryRow.ID) + " is no longer pending in group " + sanitizeText(st.entryRow.Group)
}

// Targets are what a write key takes: the entry shown, else the
// marked entries, else the one under the cursor; onMarks says the marks.
func (st *Screen) Targets() (ts []Mark, onMarks bool) {
	switch {
	case st.level == LevelEntry:
		return []Mark{{Space: st.open.space, Entry: st.entryRow}}, false
	case len(st.marks) > 0:
		return st.marks.sorted(), true
	case st.level == LevelGroup:
		if es := st.entries(); len(es) > 0 {
			return []Mark{{Space: st.open.space, Entry: es[min(st.entrySel, len(es)-1)]}}, false
		}
		st.Status = "no pending entry here to write"
	default:
		st.Status = "open a group (enter) and pick its pending entries: space marks them"
	}
	return nil, false
}

// sorted are the marks by stream, group and entry ID.
func (ms entryMarks) sorted() []Mark {
	out := make([]Mark, 0, len(ms))
	for _, mk := range ms {
		out = append(out, mk)
	}
	slices.SortFunc(out, func(a, b Mark) int {
		return cmp.Or(cmp.Compare(a.Entry.Stream, b.Entry.Stream), cmp.Compare(a.Entry.Group, b.Entry.Group), compareIDs(a.Entry.ID, b.Entry.ID))
	})
	return out
}

// compareIDs orders stream entry IDs (MS-SEQ) as the stream does.
func compareIDs(a, b string) int {
	num := func(id string) (uint64, uint64) {
		ms, seq, _ := strings.Cut(id, "-")
		x, _ := strconv.ParseUint(ms, 10, 64)
		y, _ := strconv.ParseUint(seq, 10, 64)
		return x, y
	}
	am, as := num(a)
	bm, bs := num(b)
	return cmp.Or(cmp.Compare(am, bm), cmp.Compare(as, bs), strings.Compare(a, b))
}

// RecoveryOf is the consumer a claiming retry hands a keyspace's entries
// to, as the CLI picks it.
func RecoveryOf(sp *istreams.Space) string {
	if sp != nil && sp.RecoveryConsumer != "" {
		return sp.RecoveryConsumer
	}
	return istreams.DefaultRecoveryConsumer
}

// DeadLetterOf is a keyspace's dead_letter ({stream} unexpanded; "": none).
func DeadLetterOf(sp *istreams.Space) string {
	if sp == nil {
		return ""
	}
	return sp.DeadLetter
}

// SharedDefault is the targets' keyspaces' value of f when they share one,
// else "" (the form then takes each keyspace's own).
func (st *Screen) SharedDefault(ts []Mark, f func(*istreams.Space) string) string {
	v := f(spaceNamed(st.Opts.StreamSpaces, ts[0].Space))
	for _, t := range ts[1:] {
		if f(spaceNamed(st.Opts.StreamSpaces, t.Space)) != v {
			return ""
		}
	}
	return v
}

// Form is what the write dialog's form says of a write on entries.
type Form struct {
	Kind         write.Kind
	Reason       string
	Mode, To     string // a retry's mode and recovery consumer; a dead-letter's stream
	StreamSpaces []*istreams.Space
}

// Requests are the dialog's writes, one per entry; why says what in
// the form is wrong.
func Requests(f Form, entries []Mark) (reqs []actions.EntryRequest, why string) {
	mode, to := write.RetryMode(f.Mode), f.To
	switch mode {
	case "":
		mode = write.RetryClaim
	case write.RetryClaim, write.RetryClaimJustID, write.RetryRedeliver:
	default:
		return nil, fmt.Sprintf("Mode: %q is not a retry mode: claim, claim-justid or redeliver", inspect.Sanitize(string(mode)))
	}
	for _, t := range entries {
		e, sp := t.Entry, spaceNamed(f.StreamSpaces, t.Space)
		req := actions.EntryRequest{Kind: f.Kind, Stream: string(e.Stream), Group: string(e.Group), ID: e.ID, Reason: f.Reason,
			Saw: &actions.EntrySeen{Consumer: string(e.Consumer), Deliveries: e.Deliveries}}
		switch f.Kind {
		case write.KindRetry:
			req.Mode = mode
			if mode != write.RetryRedeliver { // redeliver keeps the consumer: To is not used
				req.RecoveryConsumer = cmp.Or(to, RecoveryOf(sp))
			}
		case write.KindDeadLetter:
			dl := cmp.Or(to, DeadLetterOf(sp))
			if dl == "" {
				return nil, "To: a dead-letter stream is required: the keyspace of " + sanitizeText(e.Stream) + " sets no dead_letter"
			}
			req.DeadLetter = strings.ReplaceAll(dl, "{stream}", req.Stream)
		}
		reqs = append(reqs, req)
	}
	return reqs, ""
}

// AfterWrite follows a finished entry write: the marks it took (onMarks)
// are cleared, and the streams (and the entry shown) are read anew.
func (st *Screen) AfterWrite(onMarks bool) tea.Cmd {
	if onMarks {
		st.marks = nil
	}
	cmds := []tea.Cmd{st.Read()}
	if st.level == LevelEntry && Readable(st.Common) == "" {
		cmds = append(cmds, st.readEntry())
	}
	return tea.Batch(cmds...)
}

// text is "marked" for a marked entry, else "".
func (ms entryMarks) text(e istreams.PendingEntry) string {
	if _, ok := ms[keyOf(e)]; ok {
		return "marked"
	}
	return ""
}
