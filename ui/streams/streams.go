// Package streams is the terminal UI's Streams screens (:streams): the
// consumer groups of the profile's kind: stream keyspaces, as 'idemctl
// streams' reads them. Groups, then one group's consumers and pending
// entries, then one entry's fields. The entries are marked there, and
// what a write on them asks and shows is said here (streams_write*.go);
// the root's write dialog runs it. The screen is handed ui/common's
// Common and implements its Component.
//
// Floor 4 of ARCHITECTURE.md, with ui/: it may import floors 0–3 and
// ui/common, never ui/ itself or the command layer.
package streams

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
	istreams "github.com/idemctl/idemctl/inspect/streams"
	"github.com/idemctl/idemctl/ui/common"
)

// Level is which of the Streams screens shows.
type Level int

const (
	LevelGroups Level = iota // one row per stream and group
	LevelGroup               // a group's consumers and pending entries
	LevelEntry               // one entry's fields
)

// The TUI's read bounds: a screen shows far fewer streams than the CLI's
// default limit, and a read that hangs must give the screen back.
const (
	streamsMaxStreams  = 1000
	streamsReadTimeout = 30 * time.Second
	// entryShownCells is how much of one field value the entry view shows
	// (the server already cut it at streams.DefaultEntryValueCap bytes).
	entryShownCells = 600
)

// groupID names a group across re-reads.
type groupID struct {
	space          string
	stream, group  inspect.Text
	noGroup, valid bool
}

// Screen is the Streams screens (groups, a group's consumers and
// entries, an entry): the reads, the selection, the filter and the marks.
// Its write keys and esc from the groups are the root's: they open the
// dialog or leave the screen.
type Screen struct {
	*common.Common
	w, h int

	level Level

	seq     int                   // the newest read; older replies are dropped
	reading bool                  // a read is in flight
	client  redis.UniversalClient // what reps were read from: another source makes them void
	reps    []istreams.Report
	err     string
	readAt  time.Time

	groupSel, groupOff int
	open               groupID // the group shown at LevelGroup and under
	entrySel, entryOff int

	entrySeq    int
	entryRow    istreams.PendingEntry // the entry shown at LevelEntry, as listed
	entry       *istreams.Entry
	entryErr    string
	fieldScroll int

	entryFilter // / and x
	typing      bool
	input       textinput.Model

	marks entryMarks // the entries a write takes, as last read
}

// ReadMsg brings a finished read of every stream keyspace.
type ReadMsg struct {
	seq    int
	client redis.UniversalClient
	reps   []istreams.Report
	err    error
}

// EntryMsg brings one entry's fields.
type EntryMsg struct {
	seq int
	e   istreams.Entry
	err error
}

// New is the Streams screen over the session's Common.
func New(c *common.Common) *Screen {
	return &Screen{Common: c, input: common.NewLine("/ ", "consumer or entry ID text", 256)}
}

// Open is :streams: the groups, read anew.
func (st *Screen) Open() tea.Cmd {
	st.level = LevelGroups
	return st.Read()
}

func (st *Screen) SetSize(width, height int) { st.w, st.h = width, height }

// Update takes the reads' results and the keys the screen handles.
func (st *Screen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case ReadMsg:
		st.onRead(msg)
	case EntryMsg:
		st.onEntry(msg)
	case tea.KeyPressMsg:
		if st.typing {
			return st.onFilterKey(msg)
		}
		cmd, _ := st.OnKey(msg)
		return cmd
	}
	return nil
}

// Typing reports whether the filter is being typed: it takes every key.
func (st *Screen) Typing() bool { return st.typing }

// Shown is what the screen shows: its level, the selection, the groups
// and entries the filters keep, and how many entries are marked.
type Shown struct {
	Level    Level
	GroupRow int                     // the selected row of the groups table
	Groups   []string                // the groups table's groups, by name
	EntryID  string                  // the selected pending entry
	Entry    istreams.PendingEntry   // the entry shown at LevelEntry
	Entries  []istreams.PendingEntry // the open group's, as the filters keep them
	Marked   int
}

// Shown is what the screen shows now.
func (st *Screen) Shown() Shown {
	sh := Shown{Level: st.level, GroupRow: st.groupSel, EntryID: st.selectedEntryID(), Entry: st.entryRow,
		Entries: st.entries(), Marked: len(st.marks)}
	for _, r := range st.groupRows() {
		sh.Groups = append(sh.Groups, string(r.id.group))
	}
	return sh
}

// ReadErr is why the last read failed, "" after one that did not.
func (st *Screen) ReadErr() string { return st.err }

func (st *Screen) View() string { return st.content() }

// Readable is why streams cannot be read in this session, or "".
func Readable(c *common.Common) string {
	switch {
	case c.Opts.Scan.Snapshot != nil:
		return "streams are read from the live server; this session reads a snapshot"
	case len(c.Opts.StreamSpaces) == 0:
		return "no stream keyspace in this profile: add a keyspace with kind: stream and match: PATTERN to the config"
	case c.Opts.Client == nil:
		return "not connected to a server"
	}
	return ""
}

// Read reads every stream keyspace in the background, bounded by
// the TUI's limits; nil when there is nothing to read.
func (st *Screen) Read() tea.Cmd {
	if Readable(st.Common) != "" {
		return nil
	}
	st.seq++
	st.reading = true
	seq, ctx, c := st.seq, st.Ctx, st.Opts.Client
	spaces := make([]istreams.Space, len(st.Opts.StreamSpaces))
	for i, sp := range st.Opts.StreamSpaces {
		spaces[i] = *sp
	}
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, streamsReadTimeout)
		defer cancel()
		opt := istreams.Options{MaxStreams: streamsMaxStreams, MaxPending: istreams.DefaultMaxPending}
		reps := make([]istreams.Report, 0, len(spaces))
		for _, sp := range spaces {
			rep, err := istreams.Read(ctx, c, sp, opt)
			if err != nil {
				return ReadMsg{seq: seq, client: c, err: fmt.Errorf("keyspace %s: %s", inspect.Sanitize(sp.Name), inspect.Line(err.Error()))}
			}
			reps = append(reps, rep)
		}
		return ReadMsg{seq: seq, client: c, reps: reps}
	}
}

// onRead keeps the newest read, the selection on the same group and
// entry where they still are.
func (st *Screen) onRead(msg ReadMsg) {
	if msg.seq != st.seq {
		return
	}
	st.reading = false
	if st.Status == rereadStatus {
		st.Status = ""
	}
	if msg.err != nil {
		st.err = inspect.Line(msg.err.Error())
		return
	}
	selGroup, selEntry := st.selectedGroup(), st.selectedEntryID()
	st.reps, st.client, st.err, st.readAt = msg.reps, msg.client, "", st.Now()
	st.refreshMarks()
	rows := st.groupRows()
	for i, r := range rows {
		if r.id == selGroup {
			st.groupSel = i
		}
	}
	st.groupSel = min(st.groupSel, max(len(rows)-1, 0))
	if st.level == LevelGroups {
		return
	}
	if st.group() == nil {
		st.level = LevelGroups
		st.Status = "the group shown is gone: it was deleted, or the stream was"
		return
	}
	for i, e := range st.entries() {
		if e.ID == selEntry {
			st.entrySel = i
		}
	}
	if st.level == LevelEntry {
		st.refreshEntryRow()
	}
}

// onEntry keeps the entry read for the entry view.
func (st *Screen) onEntry(msg EntryMsg) {
	if msg.seq != st.entrySeq {
		return
	}
	if msg.err != nil {
		st.entry, st.entryErr = nil, inspect.Line(msg.err.Error())
		return
	}
	st.entry, st.entryErr = &msg.e, ""
}

// readEntry reads the fields of the entry shown, cut on the server.
func (st *Screen) readEntry() tea.Cmd {
	st.entrySeq++
	seq, ctx, c, e := st.entrySeq, st.Ctx, st.Opts.Client, st.entryRow
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, streamsReadTimeout)
		defer cancel()
		got, err := istreams.ReadEntry(ctx, c, string(e.Stream), e.ID, istreams.DefaultEntryValueCap, istreams.DefaultEntryFields)
		return EntryMsg{seq: seq, e: got, err: err}
	}
}

// Current reports whether the reports shown are of this session's source.
func (st *Screen) Current() bool {
	return st != nil && st.reps != nil && st.client == st.Opts.Client
}

// Totals are the counts over every group read.
type Totals struct {
	Streams, Groups, Pending, Stale, Poison int
	Cut                                     bool // a limit was reached: the counts are of what was read
}

// Totals are the counts over every group read.
func (st *Screen) Totals() Totals {
	var t Totals
	for _, r := range st.reps {
		t.Cut = t.Cut || r.Limited
		t.Streams += len(r.Streams)
		for _, s := range r.Streams {
			for _, g := range s.Groups {
				t.Groups++
				t.Pending += int(g.Pending)
				t.Stale += g.Stale
				t.Poison += g.Poison
				t.Cut = t.Cut || g.Truncated
			}
		}
	}
	return t
}

// entryFilter is what / and x keep of the pending entries.
type entryFilter struct {
	filter    string // consumer or ID text
	staleOnly bool
}

// keeps reports whether an entry passes the filters.
func (ef entryFilter) keeps(e *istreams.PendingEntry) bool {
	if ef.staleOnly && !e.Stale {
		return false
	}
	if ef.filter == "" {
		return true
	}
	f := strings.ToLower(ef.filter)
	return strings.Contains(strings.ToLower(inspect.Sanitize(string(e.Consumer))), f) || strings.Contains(e.ID, f)
}

func (ef entryFilter) filtered() bool { return ef.staleOnly || ef.filter != "" }

// groupRow is one line of the groups table: a group, or a stream with none.
type groupRow struct {
	id    groupID
	space *istreams.Report
	g     *istreams.GroupState // nil: the stream has no group
}

// groupRows are the groups table's lines; filtered, only the groups with a
// pending entry the filters keep.
func (st *Screen) groupRows() []groupRow {
	var rows []groupRow
	for ri := range st.reps {
		r := &st.reps[ri]
		for si := range r.Streams {
			s := &r.Streams[si]
			if len(s.Groups) == 0 && !st.filtered() {
				rows = append(rows, groupRow{id: groupID{space: r.Space, stream: s.Key, noGroup: true, valid: true}, space: r})
			}
			for gi := range s.Groups {
				g := &s.Groups[gi]
				if st.filtered() && !st.anyKept(g) {
					continue
				}
				rows = append(rows, groupRow{id: groupID{space: r.Space, stream: s.Key, group: g.Name, valid: true}, space: r, g: g})
			}
		}
	}
	return rows
}

// anyKept reports whether the filters keep some pending entry of g.
func (ef entryFilter) anyKept(g *istreams.GroupState) bool {
	for i := range g.Entries {
		if ef.keeps(&g.Entries[i]) {
			return true
		}
	}
	return false
}

func (st *Screen) selectedGroup() groupID {
	if st.level != LevelGroups {
		return st.open
	}
	if rows := st.groupRows(); st.groupSel < len(rows) {
		return rows[st.groupSel].id
	}
	return groupID{}
}

// group is the open group as last read, nil when it is gone.
func (st *Screen) group() *istreams.GroupState {
	r, g := findGroup(st.reps, st.open)
	if r == nil {
		return nil
	}
	return g
}

// findGroup is a group's row data by id in reps.
func findGroup(reps []istreams.Report, id groupID) (*istreams.Report, *istreams.GroupState) {
	for ri := range reps {
		r := &reps[ri]
		if r.Space != id.space {
			continue
		}
		for si := range r.Streams {
			for gi := range r.Streams[si].Groups {
				if g := &r.Streams[si].Groups[gi]; g.Stream == id.stream && g.Name == id.group {
					return r, g
				}
			}
		}
	}
	return nil, nil
}

// entries are the open group's pending entries the filters keep.
func (st *Screen) entries() []istreams.PendingEntry {
	g := st.group()
	if g == nil {
		return nil
	}
	var out []istreams.PendingEntry
	for i := range g.Entries {
		if st.keeps(&g.Entries[i]) {
			out = append(out, g.Entries[i])
		}
	}
	return out
}

func (st *Screen) selectedEntryID() string {
	if es := st.entries(); st.entrySel < len(es) {
		return es[st.entrySel].ID
	}
	return ""
}
