package ui

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
)

// The command line's switches: another keyspace or database without
// restarting. What was shown is dropped and a fresh scan starts, so no
// screen ever mixes two sources; the history and stale marks start over.

// switchKeyspace scans only the named configured keyspace ("" or "all":
// every keyspace the session started with).
func (m *Model) switchKeyspace(name string) tea.Cmd {
	if m.src.allKeyspaces == nil {
		m.src.allKeyspaces = m.opts.Keyspaces
	}
	if name == "" || name == "all" {
		m.opts.Keyspaces = m.src.allKeyspaces
		return m.restart("every keyspace")
	}
	var names []string
	for _, ks := range m.src.allKeyspaces {
		if ks.Name == name {
			m.opts.Keyspaces = []*inspect.Keyspace{ks}
			return m.restart("keyspace " + inspect.Sanitize(name))
		}
		names = append(names, ks.Name)
	}
	m.status = fmt.Sprintf(":keyspace %s: not configured in this session (have: %s, or all)", inspect.Sanitize(name), inspect.Sanitize(strings.Join(names, ", ")))
	return nil
}

var dbSuffix = regexp.MustCompile(`/\d+$`)

// switchDB reads another database of the same server. Writes go through
// the executor's own connection, which stays on the database the session
// started with, so a session that can write refuses: it must restart with
// --db to write there.
func (m *Model) switchDB(arg string) tea.Cmd {
	n, err := strconv.Atoi(arg)
	if err != nil || n < 0 {
		m.status = ":db needs a database number, e.g. :db 2"
		return nil
	}
	if m.opts.Scan.Snapshot != nil {
		m.status = ":db: a snapshot is read one database at a time: restart with --db " + arg
		return nil
	}
	if m.canWrite() {
		m.status = ":db: this session can write, and its writes stay on the database it started with; restart with --db " + arg
		return nil
	}
	c, ok := m.opts.Client.(*redis.Client)
	if !ok {
		m.status = ":db: a cluster has only database 0"
		return nil
	}
	o := *c.Options()
	o.DB = n
	if m.src.ownClient != nil {
		m.src.ownClient.Close()
	}
	m.src.ownClient = redis.NewClient(&o)
	m.opts.Client = m.src.ownClient
	if dbSuffix.MatchString(m.opts.Address) {
		m.opts.Address = dbSuffix.ReplaceAllString(m.opts.Address, "/"+strconv.Itoa(n))
	} else {
		m.opts.Address += "/" + strconv.Itoa(n)
	}
	m.resize(m.width, m.height) // the header's address changed
	return m.restart("database " + strconv.Itoa(n))
}

// profileMsg brings another profile, opened in the background (it connects).
type profileMsg struct {
	name  string
	opts  Options
	close func()
	err   error
}

// switchProfile opens another profile of the config: its own server,
// credentials, keyspaces and write policy, through the command layer.
func (m *Model) switchProfile(name string) tea.Cmd {
	open := m.opts.OpenProfile
	switch {
	case open == nil:
		m.status = ":profile: this session has no config to switch in; restart with idemctl --profile NAME"
		return nil
	case name == "":
		m.status = ":profile needs a profile name, e.g. :profile staging"
		return nil
	}
	ctx := m.ctx
	m.status = "opening profile " + inspect.Sanitize(name) + "…"
	return func() tea.Msg {
		o, closeFn, err := open(ctx, name)
		return profileMsg{name: name, opts: o, close: closeFn, err: err}
	}
}

// onProfile swaps the new profile in: what the old one showed is dropped,
// its connections are released, and the write keys follow the new policy.
func (m *Model) onProfile(msg profileMsg) tea.Cmd {
	if msg.err != nil {
		m.status = ":profile " + inspect.Sanitize(msg.name) + ": " + inspect.Sanitize(msg.err.Error())
		return nil
	}
	m.src.release(&m.scan)
	o := msg.opts
	o.NoColor, o.Now, o.Refresh, o.Reveal, o.OpenProfile = m.opts.NoColor, m.opts.Now, m.opts.Refresh, m.opts.Reveal, m.opts.OpenProfile
	m.opts, m.src.closeProfile, m.src.allKeyspaces = o, msg.close, nil
	m.doctor.forget()
	m.keys.SetWrites(m.canWrite(), m.opts.Scan.Snapshot != nil)
	return m.restart("profile " + inspect.Sanitize(msg.name)) // o.Notice: a banner
}

// restart drops what is shown and scans the new source from scratch.
func (m *Model) restart(what string) tea.Cmd {
	if m.scan.run != nil {
		m.scan.run.cancel()
	}
	st := newStore(maxRecords(m.opts))
	st.sortCol, st.sortDesc = m.store.sortCol, m.store.sortDesc
	m.store = st
	m.stats = inspect.NewStats(10)
	m.trend = trend{}
	m.records.marks = nil
	m.detail.close()
	m.records.cursor, m.records.offset = 0, 0
	m.overview.fromTop()
	m.statsScreen.fromTop()
	m.writes.page.scroll = 0
	if m.screen == screenDetail {
		m.screen = screenRecords
	}
	m.resize(m.width, m.height) // the header names the new source
	cmd := m.scan.start()
	m.status = "now reading " + what
	return cmd
}
