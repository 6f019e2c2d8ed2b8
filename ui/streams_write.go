package ui

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/streams"
)

// Writes on pending entries from the Streams screen: space marks entries
// (a all in view, u unmarks), T retries, A acks, D dead-letters them
// through the write dialog, as the record writes go: the form (a reason; a
// retry's mode and recovery consumer, a dead-letter's stream), the plan
// read from the server, one line per entry, the typed confirmation, the
// executor's guarded run, the tally. The entries go as the operator saw
// them (consumer and delivery count): one that moved since is a conflict.

// entryWritesHint is what the Streams screen's write keys do.
const entryWritesHint = "T retries, A acks, D dead-letters pending entries (space marks them)"

// entryKey names a pending entry across re-reads.
type entryKey struct {
	stream, group inspect.Text
	id            string
}

func keyOf(e streams.PendingEntry) entryKey { return entryKey{e.Stream, e.Group, e.ID} }

// entryMarks are the marked entries by entry.
type entryMarks map[entryKey]entryMark

// entryMark is a pending entry a write takes, as last read, and the
// keyspace it was read in (its recovery consumer and dead-letter stream).
type entryMark struct {
	space string
	e     streams.PendingEntry
}

// isEntryWriteKey is a marking or write key of the Streams screen, on or
// off: off, it says why.
func (k *KeyMap) isEntryWriteKey(msg tea.KeyPressMsg) bool {
	for _, b := range []key.Binding{k.Mark, k.MarkAll, k.Unmark, k.Retry, k.Ack, k.DeadLetter} {
		if slices.Contains(b.Keys(), msg.String()) {
			return true
		}
	}
	return false
}

// toggleMark is space: the entry under the cursor (and on to the
// next, so space marks a run), or the entry shown.
func (st *streamsScreen) toggleMark() {
	switch st.level {
	case levelGroups:
		st.status = "open a group (enter) to mark its pending entries"
	case levelEntry:
		st.marks.toggle(st.open.space, st.entryRow)
	default:
		es := st.entries()
		if len(es) == 0 {
			st.status = "no pending entry to mark here"
			return
		}
		st.entrySel = min(st.entrySel, len(es)-1)
		st.marks.toggle(st.open.space, es[st.entrySel])
		st.entrySel = min(st.entrySel+1, len(es)-1)
	}
}

// toggle marks e, read in keyspace space, or unmarks it.
func (ms *entryMarks) toggle(space string, e streams.PendingEntry) {
	k := keyOf(e)
	if _, ok := (*ms)[k]; ok {
		delete(*ms, k)
		return
	}
	if *ms == nil {
		*ms = entryMarks{}
	}
	(*ms)[k] = entryMark{space: space, e: e}
}

// markAll is a: every entry the filters keep in the open group, or
// none of them when they all are marked already.
func (st *streamsScreen) markAll() {
	if st.level != levelGroup {
		st.status = "a marks every pending entry of the group shown: open a group (enter) first"
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

func (st *streamsScreen) unmarkAll() {
	st.status = "nothing was marked (space marks an entry, a all in view)"
	if n := len(st.marks); n > 0 {
		st.status = "unmarked " + count(n)
	}
	st.marks = nil
}

// refreshMarks keeps the marks of entries still pending, as read now: a
// write takes them as the screen shows them.
func (st *streamsScreen) refreshMarks() {
	for k, mk := range st.marks {
		if e, ok := st.pending(mk.space, k); ok {
			mk.e = e
			st.marks[k] = mk
		} else {
			delete(st.marks, k)
		}
	}
}

// pending is an entry as last read; ok is false when it is not listed.
func (st *streamsScreen) pending(space string, k entryKey) (e streams.PendingEntry, ok bool) {
	_, g := st.find(groupID{space: space, stream: k.stream, group: k.group, valid: true})
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
func (st *streamsScreen) refreshEntryRow() {
	if e, ok := st.pending(st.open.space, keyOf(st.entryRow)); ok {
		st.entryRow = e
		return
	}
	if g := st.group(); g == nil || g.Truncated {
		return // not read this time: the row stays as it was
	}
	st.level, st.entry, st.entryErr = levelGroup, nil, ""
	st.status = "entry " + inspect.Sanitize(st.entryRow.ID) + " is no longer pending in group " + sanitizeText(st.entryRow.Group)
}

// targets are what a write key takes: the entry shown, else the
// marked entries, else the one under the cursor; onMarks says the marks.
func (st *streamsScreen) targets() (ts []entryMark, onMarks bool) {
	switch {
	case st.level == levelEntry:
		return []entryMark{{space: st.open.space, e: st.entryRow}}, false
	case len(st.marks) > 0:
		return st.marks.sorted(), true
	case st.level == levelGroup:
		if es := st.entries(); len(es) > 0 {
			return []entryMark{{space: st.open.space, e: es[min(st.entrySel, len(es)-1)]}}, false
		}
		st.status = "no pending entry here to write"
	default:
		st.status = "open a group (enter) and pick its pending entries: space marks them"
	}
	return nil, false
}

// sorted are the marks by stream, group and entry ID.
func (ms entryMarks) sorted() []entryMark {
	out := make([]entryMark, 0, len(ms))
	for _, mk := range ms {
		out = append(out, mk)
	}
	slices.SortFunc(out, func(a, b entryMark) int {
		return cmp.Or(cmp.Compare(a.e.Stream, b.e.Stream), cmp.Compare(a.e.Group, b.e.Group), compareIDs(a.e.ID, b.e.ID))
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

// openEntryWrite opens the write dialog of kind on the entries a write
// key takes.
func (m *Model) openEntryWrite(kind write.Kind) tea.Cmd {
	if why := m.streamsReadable(); why != "" {
		m.status = why
		return nil
	}
	if !m.canWrite() {
		m.status = m.offHint(m.screen == screenStreams)
		return nil
	}
	targets, onMarks := m.streams.targets()
	if len(targets) == 0 {
		return nil
	}
	w := max(m.width-20, 20)
	d := &dialog{kind: kind, entries: targets, onMarks: onMarks, step: stepForm,
		labels: []string{"Reason"}, inputs: []textinput.Model{newInput("why (required)", "", w)}}
	switch kind {
	case write.KindRetry:
		d.labels = append(d.labels, "Mode", "To")
		d.inputs = append(d.inputs, newInput("claim, claim-justid or redeliver", string(write.RetryClaim), w),
			newInput("the recovery consumer (empty: each keyspace's)", m.streams.sharedDefault(targets, recoveryOf), w))
	case write.KindDeadLetter:
		d.labels = append(d.labels, "To")
		d.inputs = append(d.inputs, newInput("the dead-letter stream (empty: each keyspace's dead_letter)", m.streams.sharedDefault(targets, deadLetterOf), w))
	}
	m.dialog = d.start(m.common)
	return m.dialog.focusInput()
}

// recoveryOf is the consumer a claiming retry hands a keyspace's entries
// to, as the CLI picks it.
func recoveryOf(sp *streams.Space) string {
	if sp != nil && sp.RecoveryConsumer != "" {
		return sp.RecoveryConsumer
	}
	return streams.DefaultRecoveryConsumer
}

// deadLetterOf is a keyspace's dead_letter ({stream} unexpanded; "": none).
func deadLetterOf(sp *streams.Space) string {
	if sp == nil {
		return ""
	}
	return sp.DeadLetter
}

// sharedDefault is the targets' keyspaces' value of f when they share one,
// else "" (the form then takes each keyspace's own).
func (st *streamsScreen) sharedDefault(ts []entryMark, f func(*streams.Space) string) string {
	v := f(st.streamSpace(ts[0].space))
	for _, t := range ts[1:] {
		if f(st.streamSpace(t.space)) != v {
			return ""
		}
	}
	return v
}

// planEntryWrites checks the form and plans each entry in the background:
// each is read as it is now and compared with what the operator saw.
func (d *dialog) planEntryWrites(reason string) tea.Cmd {
	reqs, why := d.entryRequests(reason)
	if why != "" {
		d.errText = why
		return nil
	}
	d.errText, d.step = "", stepPlanning
	ex, ctx := d.opts.Executor, d.ctx
	return func() tea.Msg {
		plans := make([]*actions.Plan, 0, len(reqs))
		for _, r := range reqs {
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			p, err := ex.PlanEntry(pctx, r)
			cancel()
			if err != nil {
				return planMsg{err: fmt.Errorf("entry %s of %s: %s", inspect.Sanitize(r.ID), inspect.Sanitize(r.Stream), inspect.Line(err.Error()))}
			}
			plans = append(plans, p)
		}
		return planMsg{plans: plans}
	}
}

// entryRequests are the dialog's writes, one per entry; why says what in
// the form is wrong.
func (d *dialog) entryRequests(reason string) (reqs []actions.EntryRequest, why string) {
	mode, to := write.RetryMode(d.value("Mode")), d.value("To")
	switch mode {
	case "":
		mode = write.RetryClaim
	case write.RetryClaim, write.RetryClaimJustID, write.RetryRedeliver:
	default:
		return nil, fmt.Sprintf("Mode: %q is not a retry mode: claim, claim-justid or redeliver", inspect.Sanitize(string(mode)))
	}
	for _, t := range d.entries {
		e, sp := t.e, d.streamSpace(t.space)
		req := actions.EntryRequest{Kind: d.kind, Stream: string(e.Stream), Group: string(e.Group), ID: e.ID, Reason: reason,
			Saw: &actions.EntrySeen{Consumer: string(e.Consumer), Deliveries: e.Deliveries}}
		switch d.kind {
		case write.KindRetry:
			req.Mode = mode
			if mode != write.RetryRedeliver { // redeliver keeps the consumer: To is not used
				req.RecoveryConsumer = cmp.Or(to, recoveryOf(sp))
			}
		case write.KindDeadLetter:
			dl := cmp.Or(to, deadLetterOf(sp))
			if dl == "" {
				return nil, "To: a dead-letter stream is required: the keyspace of " + sanitizeText(e.Stream) + " sets no dead_letter"
			}
			req.DeadLetter = strings.ReplaceAll(dl, "{stream}", req.Stream)
		}
		reqs = append(reqs, req)
	}
	return reqs, ""
}

// wroteEntries reports whether the dialog's plans write pending entries
// (an undo of a retry included).
func (d *dialog) wroteEntries() bool {
	for _, p := range d.plans {
		if p.Entry() != nil {
			return true
		}
	}
	return d.entries != nil
}

// afterWrite follows a finished entry write: the marks it took (onMarks)
// are cleared, and the streams (and the entry shown) are read anew.
func (st *streamsScreen) afterWrite(onMarks bool) tea.Cmd {
	if onMarks {
		st.marks = nil
	}
	cmds := []tea.Cmd{st.read()}
	if st.level == levelEntry && st.streamsReadable() == "" {
		cmds = append(cmds, st.readEntry())
	}
	return tea.Batch(cmds...)
}

// resultKey is what the dialog calls result i's target: a record's key,
// or an entry's stream and ID.
func (d *dialog) resultKey(i int) string {
	if i < len(d.plans) {
		if e := d.plans[i].Entry(); e != nil {
			return e.Stream + " " + e.ID
		}
	}
	return d.results[i].Key
}

// noun is what the dialog writes, as its texts say it.
func (d *dialog) noun() string {
	if d.entries != nil {
		return "entries"
	}
	return "records"
}

// text is "marked" for a marked entry, else "".
func (ms entryMarks) text(e streams.PendingEntry) string {
	if _, ok := ms[keyOf(e)]; ok {
		return "marked"
	}
	return ""
}
