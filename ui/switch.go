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

// keyspace narrows the session to the named configured keyspace ("" or
// "all": every keyspace it started with); what names it for the status.
func (s *source) keyspace(c *shared, name string) (what string, ok bool) {
	if s.allKeyspaces == nil {
		s.allKeyspaces = c.Opts.Keyspaces
	}
	if name == "" || name == "all" {
		c.Opts.Keyspaces = s.allKeyspaces
		return "every keyspace", true
	}
	var names []string
	for _, ks := range s.allKeyspaces {
		if ks.Name == name {
			c.Opts.Keyspaces = []*inspect.Keyspace{ks}
			return "keyspace " + inspect.Sanitize(name), true
		}
		names = append(names, ks.Name)
	}
	c.Status = fmt.Sprintf(":keyspace %s: not configured in this session (have: %s, or all)", inspect.Sanitize(name), inspect.Sanitize(strings.Join(names, ", ")))
	return "", false
}

var dbSuffix = regexp.MustCompile(`/\d+$`)

// db points the session at another database of the same server. Writes
// go through the executor's own connection, which stays on the database
// the session started with, so a session that can write refuses: it must
// restart with --db to write there.
func (s *source) db(c *shared, arg string) (what string, ok bool) {
	n, err := strconv.Atoi(arg)
	if err != nil || n < 0 {
		c.Status = ":db needs a database number, e.g. :db 2"
		return "", false
	}
	if c.Opts.Scan.Snapshot != nil {
		c.Status = ":db: a snapshot is read one database at a time: restart with --db " + arg
		return "", false
	}
	if c.CanWrite() {
		c.Status = ":db: this session can write, and its writes stay on the database it started with; restart with --db " + arg
		return "", false
	}
	rc, isOne := c.Opts.Client.(*redis.Client)
	if !isOne {
		c.Status = ":db: a cluster has only database 0"
		return "", false
	}
	o := *rc.Options()
	o.DB = n
	if s.ownClient != nil {
		s.ownClient.Close()
	}
	s.ownClient = redis.NewClient(&o)
	c.Opts.Client = s.ownClient
	if dbSuffix.MatchString(c.Opts.Address) {
		c.Opts.Address = dbSuffix.ReplaceAllString(c.Opts.Address, "/"+strconv.Itoa(n))
	} else {
		c.Opts.Address += "/" + strconv.Itoa(n)
	}
	return "database " + strconv.Itoa(n), true
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
	open := m.Opts.OpenProfile
	switch {
	case open == nil:
		m.Status = ":profile: this session has no config to switch in; restart with idemctl --profile NAME"
		return nil
	case name == "":
		m.Status = ":profile needs a profile name, e.g. :profile staging"
		return nil
	}
	ctx := m.Ctx
	m.Status = "opening profile " + inspect.Sanitize(name) + "…"
	return func() tea.Msg {
		o, closeFn, err := open(ctx, name)
		return profileMsg{name: name, opts: o, close: closeFn, err: err}
	}
}

// onProfile swaps the new profile in: what the old one showed is dropped,
// its connections are released, and the write keys follow the new policy.
func (m *Model) onProfile(msg profileMsg) tea.Cmd {
	if msg.err != nil {
		m.Status = ":profile " + inspect.Sanitize(msg.name) + ": " + inspect.Sanitize(msg.err.Error())
		return nil
	}
	m.src.release(&m.scan)
	o := msg.opts
	o.NoColor, o.Now, o.Refresh, o.Reveal, o.OpenProfile = m.Opts.NoColor, m.Opts.Now, m.Opts.Refresh, m.Opts.Reveal, m.Opts.OpenProfile
	o.Follow, o.FollowMode = m.Opts.Follow, m.Opts.FollowMode
	m.Opts, m.src.closeProfile, m.src.allKeyspaces = o, msg.close, nil
	m.doctor.forget()
	m.Keys.SetWrites(m.CanWrite(), m.Opts.Scan.Snapshot != nil)
	return m.restart("profile " + inspect.Sanitize(msg.name)) // o.Notice: a banner
}

// restart drops what is shown and scans the new source from scratch.
func (m *Model) restart(what string) tea.Cmd {
	if m.scan.run != nil {
		m.scan.run.cancel()
	}
	m.scan.stopFollow()
	m.scan.liveWhy = "" // the new source may follow
	st := newStore(maxRecords(m.Opts))
	st.sortCol, st.sortDesc = m.store.sortCol, m.store.sortDesc
	m.store = st
	m.stats = inspect.NewStats(10)
	m.trend = trend{}
	m.records.dropMarks()
	m.detail.close()
	m.records.cursorTo(0)
	m.overview.fromTop()
	m.statsScreen.fromTop()
	m.writes.page.scroll = 0
	if m.screen == screenDetail {
		m.screen = screenRecords
	}
	m.resize(m.Width, m.Height) // the header names the new source
	cmd := m.scan.start()
	m.Status = "now reading " + what
	return cmd
}
