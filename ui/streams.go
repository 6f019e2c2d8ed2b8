package ui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/streams"
)

// The Streams screen (:streams): the consumer groups of the profile's
// kind: stream keyspaces, as 'idemctl streams' reads them. Groups, then one
// group's consumers and pending entries, then one entry's fields. The
// entries are marked and written there (streams_write*.go).

type streamLevel int

const (
	levelGroups streamLevel = iota // one row per stream and group
	levelGroup                     // a group's consumers and pending entries
	levelEntry                     // one entry's fields
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

// streamsScreen is the Streams screens (groups, a group's consumers and
// entries, an entry): the reads, the selection, the filter and the marks.
// Its write keys and esc from the groups are the root's: they open the
// dialog or leave the screen.
type streamsScreen struct {
	*common
	w, h int

	from  screen // where esc from the groups returns to
	level streamLevel

	seq     int                   // the newest read; older replies are dropped
	reading bool                  // a read is in flight
	client  redis.UniversalClient // what reps were read from: another source makes them void
	reps    []streams.Report
	err     string
	readAt  time.Time

	groupSel, groupOff int
	open               groupID // the group shown at levelGroup and under
	entrySel, entryOff int

	entrySeq    int
	entryRow    streams.PendingEntry // the entry shown at levelEntry, as listed
	entry       *streams.Entry
	entryErr    string
	fieldScroll int

	entryFilter // / and x
	typing      bool
	input       textinput.Model

	marks entryMarks // the entries a write takes, as last read
}

// streamsMsg brings a finished read of every stream keyspace.
type streamsMsg struct {
	seq    int
	client redis.UniversalClient
	reps   []streams.Report
	err    error
}

// streamEntryMsg brings one entry's fields.
type streamEntryMsg struct {
	seq int
	e   streams.Entry
	err error
}

func newStreamsScreen(c *common) *streamsScreen {
	return &streamsScreen{common: c, input: newLine("/ ", "consumer or entry ID text", 256)}
}

// Open is :streams from screen from: the groups, read anew.
func (st *streamsScreen) Open(from screen) tea.Cmd {
	if from != screenStreams {
		st.from = from
	}
	st.level = levelGroups
	return st.read()
}

func (st *streamsScreen) SetSize(width, height int) { st.w, st.h = width, height }

// Update takes the reads' results and the keys the screen handles.
func (st *streamsScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case streamsMsg:
		st.onRead(msg)
	case streamEntryMsg:
		st.onEntry(msg)
	case tea.KeyPressMsg:
		cmd, _ := st.onKey(msg)
		return cmd
	}
	return nil
}

func (st *streamsScreen) View() string { return st.content() }

// streamsReadable is why streams cannot be read in this session, or "".
func (c *common) streamsReadable() string {
	switch {
	case c.opts.Scan.Snapshot != nil:
		return "streams are read from the live server; this session reads a snapshot"
	case len(c.opts.StreamSpaces) == 0:
		return "no stream keyspace in this profile: add a keyspace with kind: stream and match: PATTERN to the config"
	case c.opts.Client == nil:
		return "not connected to a server"
	}
	return ""
}

// read reads every stream keyspace in the background, bounded by
// the TUI's limits; nil when there is nothing to read.
func (st *streamsScreen) read() tea.Cmd {
	if st.streamsReadable() != "" {
		return nil
	}
	st.seq++
	st.reading = true
	seq, ctx, c := st.seq, st.ctx, st.opts.Client
	spaces := make([]streams.Space, len(st.opts.StreamSpaces))
	for i, sp := range st.opts.StreamSpaces {
		spaces[i] = *sp
	}
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, streamsReadTimeout)
		defer cancel()
		opt := streams.Options{MaxStreams: streamsMaxStreams, MaxPending: streams.DefaultMaxPending}
		reps := make([]streams.Report, 0, len(spaces))
		for _, sp := range spaces {
			rep, err := streams.Read(ctx, c, sp, opt)
			if err != nil {
				return streamsMsg{seq: seq, client: c, err: fmt.Errorf("keyspace %s: %s", inspect.Sanitize(sp.Name), inspect.Line(err.Error()))}
			}
			reps = append(reps, rep)
		}
		return streamsMsg{seq: seq, client: c, reps: reps}
	}
}

// onRead keeps the newest read, the selection on the same group and
// entry where they still are.
func (st *streamsScreen) onRead(msg streamsMsg) {
	if msg.seq != st.seq {
		return
	}
	st.reading = false
	if st.status == rereadStatus {
		st.status = ""
	}
	if msg.err != nil {
		st.err = inspect.Line(msg.err.Error())
		return
	}
	selGroup, selEntry := st.selectedGroup(), st.selectedEntryID()
	st.reps, st.client, st.err, st.readAt = msg.reps, msg.client, "", st.now()
	st.refreshMarks()
	rows := st.groupRows()
	for i, r := range rows {
		if r.id == selGroup {
			st.groupSel = i
		}
	}
	st.groupSel = min(st.groupSel, max(len(rows)-1, 0))
	if st.level == levelGroups {
		return
	}
	if st.group() == nil {
		st.level = levelGroups
		st.status = "the group shown is gone: it was deleted, or the stream was"
		return
	}
	for i, e := range st.entries() {
		if e.ID == selEntry {
			st.entrySel = i
		}
	}
	if st.level == levelEntry {
		st.refreshEntryRow()
	}
}

// onEntry keeps the entry read for the entry view.
func (st *streamsScreen) onEntry(msg streamEntryMsg) {
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
func (st *streamsScreen) readEntry() tea.Cmd {
	st.entrySeq++
	seq, ctx, c, e := st.entrySeq, st.ctx, st.opts.Client, st.entryRow
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, streamsReadTimeout)
		defer cancel()
		got, err := streams.ReadEntry(ctx, c, string(e.Stream), e.ID, streams.DefaultEntryValueCap, streams.DefaultEntryFields)
		return streamEntryMsg{seq: seq, e: got, err: err}
	}
}

// current reports whether the reports shown are of this session's source.
func (st *streamsScreen) current() bool {
	return st != nil && st.reps != nil && st.client == st.opts.Client
}

// streamTotals are the counts over every group read.
type streamTotals struct {
	streams, groups, pending, stale, poison int
	cut                                     bool // a limit was reached: the counts are of what was read
}

func (st *streamsScreen) totals() streamTotals {
	var t streamTotals
	for _, r := range st.reps {
		t.cut = t.cut || r.Limited
		t.streams += len(r.Streams)
		for _, s := range r.Streams {
			for _, g := range s.Groups {
				t.groups++
				t.pending += int(g.Pending)
				t.stale += g.Stale
				t.poison += g.Poison
				t.cut = t.cut || g.Truncated
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
func (ef entryFilter) keeps(e *streams.PendingEntry) bool {
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
	space *streams.Report
	g     *streams.GroupState // nil: the stream has no group
}

// groupRows are the groups table's lines; filtered, only the groups with a
// pending entry the filters keep.
func (st *streamsScreen) groupRows() []groupRow {
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

func (st *streamsScreen) anyKept(g *streams.GroupState) bool {
	for i := range g.Entries {
		if st.keeps(&g.Entries[i]) {
			return true
		}
	}
	return false
}

func (st *streamsScreen) selectedGroup() groupID {
	if st.level != levelGroups {
		return st.open
	}
	if rows := st.groupRows(); st.groupSel < len(rows) {
		return rows[st.groupSel].id
	}
	return groupID{}
}

// group is the open group as last read, nil when it is gone.
func (st *streamsScreen) group() *streams.GroupState {
	r, g := st.find(st.open)
	if r == nil {
		return nil
	}
	return g
}

// find is a group's row data by id.
func (st *streamsScreen) find(id groupID) (*streams.Report, *streams.GroupState) {
	for ri := range st.reps {
		r := &st.reps[ri]
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
func (st *streamsScreen) entries() []streams.PendingEntry {
	g := st.group()
	if g == nil {
		return nil
	}
	var out []streams.PendingEntry
	for i := range g.Entries {
		if st.keeps(&g.Entries[i]) {
			out = append(out, g.Entries[i])
		}
	}
	return out
}

func (st *streamsScreen) selectedEntryID() string {
	if es := st.entries(); st.entrySel < len(es) {
		return es[st.entrySel].ID
	}
	return ""
}
