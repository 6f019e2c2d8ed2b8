package ui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
	"github.com/idemctl/idemctl/ui/common"
)

// detailScreen is the Detail screen: the record open, fetched whole on
// demand, in a viewport. Its write keys, copy keys and back are the
// root's: they open the dialog or leave the screen.
type detailScreen struct {
	*shared
	cur *detailState // nil: no record open
	vp  viewport.Model
}

func newDetailScreen(c *shared) *detailScreen { return &detailScreen{shared: c} }

// detailState is the record open on the detail screen.
type detailState struct {
	key       string
	ks        *inspect.Keyspace
	scanned   inspect.Record // as the table showed it
	d         *inspect.Detail
	err       error
	fetchedAt time.Time
	reveal    bool
	found     *foundNote // how :find came here; nil: from the table
}

// detailMsg carries a fetched record; dropped when another one is open.
type detailMsg struct {
	key string
	d   inspect.Detail
	err error
}

// Open shows r, as scanned until the fetch it returns answers.
func (ds *detailScreen) Open(r *inspect.Record) tea.Cmd {
	ds.cur = &detailState{key: r.Key, ks: r.Keyspace, scanned: *r, reveal: ds.Opts.Reveal}
	ds.vp.SetYOffset(0)
	ds.render()
	return ds.fetch()
}

// close forgets the record open.
func (ds *detailScreen) close() { ds.cur = nil }

// SetSize sizes the viewport. The root calls it on a resize only: the
// viewport keeps that height as banners come and go.
func (ds *detailScreen) SetSize(width, height int) {
	ds.vp.SetWidth(width)
	ds.vp.SetHeight(height)
	ds.render()
}

// fetch reads the whole record live; from a snapshot there is no server
// to read, and the detail is the record as the file held it.
func (ds *detailScreen) fetch() tea.Cmd {
	if ds.Opts.Scan.Snapshot != nil || ds.cur == nil {
		return nil
	}
	return fetchDetail(ds.Ctx, ds.Opts.Client, ds.cur.ks, ds.cur.key)
}

// shown is the record as the detail screen shows it: fetched, or as scanned
// until the fetch answers. A write from here checks against this.
func (st *detailState) shown() inspect.Record {
	if st.d != nil {
		return st.d.Record
	}
	return st.scanned
}

func fetchDetail(ctx context.Context, c redis.UniversalClient, ks *inspect.Keyspace, k string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		d, err := inspect.FetchDetail(ctx, c, ks, k)
		return detailMsg{key: k, d: d, err: err}
	}
}

// Update takes the fetched record (another one's is dropped), the tick
// that counts the TTL down, and the keys that read or move.
func (ds *detailScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case detailMsg:
		ds.onFetched(msg)
	case tickMsg:
		ds.render()
	case tea.KeyPressMsg:
		return ds.onKey(msg)
	}
	return nil
}

func (ds *detailScreen) onFetched(msg detailMsg) {
	if ds.cur == nil || msg.key != ds.cur.key {
		return
	}
	ds.cur.err = msg.err
	if msg.err == nil {
		d := msg.d
		ds.cur.d = &d
	}
	ds.cur.fetchedAt = ds.Now()
	ds.render()
}

func (ds *detailScreen) onKey(msg tea.KeyPressMsg) tea.Cmd {
	k := ds.Keys
	switch {
	case key.Matches(msg, k.Reveal):
		ds.setReveal(!ds.cur.reveal)
		return nil
	case key.Matches(msg, k.Rescan):
		return ds.fetch()
	case key.Matches(msg, k.Top):
		ds.vp.GotoTop()
		return nil
	case key.Matches(msg, k.Bottom):
		ds.vp.GotoBottom()
		return nil
	}
	var cmd tea.Cmd
	ds.vp, cmd = ds.vp.Update(msg)
	return cmd
}

// setReveal shows or hides the response.
func (ds *detailScreen) setReveal(on bool) {
	ds.cur.reveal = on
	ds.render()
}

// scroll moves the viewport by d lines (the wheel).
func (ds *detailScreen) scroll(d int) {
	if d < 0 {
		ds.vp.ScrollUp(-d)
	} else {
		ds.vp.ScrollDown(d)
	}
}

// View is the viewport, its last line saying how much more is below.
func (ds *detailScreen) View() string {
	body := ds.vp.View()
	if !ds.vp.AtBottom() {
		lines := strings.Split(body, "\n")
		below := ds.vp.TotalLineCount() - ds.vp.YOffset() - len(lines) + 1
		body = strings.Join(append(lines[:len(lines)-1], ds.MoreBelow(below)), "\n")
	}
	return body
}

// render rebuilds the detail text (on fetch, reveal, resize, and the
// one-second tick that counts the TTL down).
func (ds *detailScreen) render() {
	st := ds.cur
	if st == nil {
		return
	}
	s := ds.Styles
	var b strings.Builder
	line := func(label, value string) {
		b.WriteString(hang(s.Bold.Render(fmt.Sprintf("%-12s", label))+" ", value, ds.Width) + "\n")
	}
	r := st.scanned
	elapsed := time.Duration(0)
	if st.d != nil {
		r = st.d.Record
		elapsed = ds.Now().Sub(st.fetchedAt)
	}
	line("KEY", inspect.Sanitize(r.Key))
	if f := st.found; f != nil {
		line("FOUND BY", fmt.Sprintf(":find, as %s keys it, from %s", f.library, orDash(f.inputs)))
		line("VERDICT", verdictStyle(ds.Styles, f.verdict.Kind).Render(f.verdict.Line))
	}
	ks := r.Keyspace
	line("KEYSPACE", fmt.Sprintf("%s (match %s, schema %s)", inspect.Sanitize(ks.Name), inspect.Sanitize(ks.Match), ks.Schema.Name))
	switch {
	case st.err != nil:
		line("", s.Error.Render("could not fetch the record: "+inspect.Sanitize(st.err.Error())+" — showing the scan's view (r retries)"))
	case st.d == nil && ds.Opts.Scan.Snapshot != nil:
		line("", s.Dim.Render("as the snapshot held it: the fields idemctl reads (there is no server to fetch the rest from)"))
	case st.d == nil:
		line("", s.Dim.Render("fetching the whole record…"))
	}
	state := s.State[r.State].Render(r.State.String())
	if r.RawState != "" {
		state += s.Dim.Render(fmt.Sprintf("  (stored %q)", inspect.Sanitize(r.RawState)))
	}
	if r.Stale() {
		state += "  " + s.Stale.Render("STALE")
	}
	line("STATE", state)
	line("FINGERPRINT", orDash(inspect.Sanitize(r.Fingerprint)))
	if r.Status != 0 {
		line("STATUS", fmt.Sprint(r.Status))
	}
	line("TTL", liveTTL(r.TTLms, elapsed))
	mem := units.FormatBytes(r.MemoryBytes)
	if st.d != nil && st.d.Encoding != "" {
		mem += "   encoding " + inspect.Sanitize(st.d.Encoding)
	}
	line("MEMORY", mem+"   type "+r.Type.String())
	line("AGE", ageExplain(&r, ks, elapsed))
	if r.State == inspect.StateProcessing {
		why := staleExplain(&r, ks, elapsed)
		if r.Stale() && ds.CanWrite() {
			why += " (F force-fails, R reconciles, here)"
		}
		line("STALE?", why)
	}
	ds.groupsAndFlags(&b, line, &r)
	if st.d != nil {
		ds.fields(&b, st)
	}
	ds.vp.SetContent(b.String())
}

// groupsAndFlags writes the record's template captures and each of its
// flags explained.
func (ds *detailScreen) groupsAndFlags(b *strings.Builder, line func(label, value string), r *inspect.Record) {
	s, ks := ds.Styles, r.Keyspace
	if names := ks.Template.Names(); len(names) > 0 {
		var g []string
		for i, n := range names {
			if r.Groups != nil {
				g = append(g, n+"="+inspect.Sanitize(r.Groups[i]))
			}
		}
		if g == nil {
			g = []string{s.Dim.Render("key does not fit " + inspect.Sanitize(ks.Template.String()))}
		}
		line("GROUPS", strings.Join(g, "  "))
	}
	if r.Flags != 0 {
		b.WriteString("\n" + s.Title.Render("FLAGS") + "\n")
		for _, fi := range inspect.AllFlags() {
			if r.Flags&fi.Flag != 0 {
				b.WriteString(hang(fmt.Sprintf("  %-20s ", flagName(fi.Flag)), fi.Explain, ds.Width) + "\n")
			}
		}
	}
}

// fields writes the fetched record's fields, the response redacted
// until v, and pretty-printed when it is JSON.
func (ds *detailScreen) fields(b *strings.Builder, st *detailState) {
	s := ds.Styles
	d := st.d
	title := fmt.Sprintf("FIELDS (%s of %s)", common.Count(len(d.Fields)), common.Count(d.FieldCount))
	if d.Partial != "" {
		title += " — " + d.Partial + ": only the schema's fields"
	}
	b.WriteString("\n" + s.Title.Render(title) + "\n")
	respField := st.ks.Schema.Response
	isString := d.Record.Type == inspect.TypeString
	var response string
	for _, f := range d.Fields {
		v := f.Value
		secret := f.Name == respField || isString && d.Record.ResponseLen > 0
		switch {
		case secret && !st.reveal:
			v = s.Dim.Render(fmt.Sprintf("‹redacted: %s — v reveals›", units.FormatBytes(f.Len)))
		case f.Truncated && f.Value == "":
			v = s.Dim.Render(fmt.Sprintf("‹%s: above the read cap, not fetched›", units.FormatBytes(f.Len)))
		default:
			if secret {
				response = f.Value
			}
			v = inspect.Sanitize(v)
			if len(v) > 200 {
				v = v[:200] + "…"
			}
			if f.Truncated {
				v += s.Dim.Render(fmt.Sprintf(" ‹cut at %s of %s›", units.FormatBytes(int64(len(f.Value))), units.FormatBytes(f.Len)))
			}
		}
		if f.TTLms >= 0 && !isString {
			v += s.Dim.Render(" (field TTL " + units.FormatMs(f.TTLms) + ")")
		}
		b.WriteString(hang(fmt.Sprintf("  %-16s ", inspect.Sanitize(f.Name)), v, ds.Width) + "\n")
	}
	if response != "" {
		b.WriteString("\n" + s.Title.Render("RESPONSE (v hides)") + "\n")
		pretty, _ := inspect.PrettyJSON(response)
		for _, l := range strings.Split(pretty, "\n") {
			l = inspect.Sanitize(l)
			body := strings.TrimLeft(l, " ")
			// A long JSON line continues under its own first character.
			b.WriteString(hang("  "+l[:len(l)-len(body)], body, ds.Width) + "\n")
		}
	}
}
