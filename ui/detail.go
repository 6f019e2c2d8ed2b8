package ui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

// detailState is the record open on the detail screen.
type detailState struct {
	key       string
	ks        *inspect.Keyspace
	scanned   inspect.Record // as the table showed it
	d         *inspect.Detail
	err       error
	fetchedAt time.Time
	reveal    bool
}

// detailMsg carries a fetched record; dropped when another one is open.
type detailMsg struct {
	key string
	d   inspect.Detail
	err error
}

func (m *Model) openDetail() tea.Cmd {
	r := m.store.at(m.cursor)
	if r == nil {
		return nil
	}
	m.detail = &detailState{key: r.Key, ks: r.Keyspace, scanned: *r, reveal: m.opts.Reveal}
	m.screen = screenDetail
	m.vp.SetYOffset(0)
	m.renderDetail()
	return m.fetchDetail(r.Keyspace, r.Key)
}

// fetchDetail reads the whole record live; from a snapshot there is no
// server to read, and the detail is the record as the file held it.
func (m *Model) fetchDetail(ks *inspect.Keyspace, key string) tea.Cmd {
	if m.opts.Scan.Snapshot != nil {
		return nil
	}
	return fetchDetail(m.ctx, m.opts.Client, ks, key)
}

// shown is the record as the detail screen shows it: fetched, or as scanned
// until the fetch answers. A write from here checks against this.
func (ds *detailState) shown() inspect.Record {
	if ds.d != nil {
		return ds.d.Record
	}
	return ds.scanned
}

func fetchDetail(ctx context.Context, c redis.UniversalClient, ks *inspect.Keyspace, k string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		d, err := inspect.FetchDetail(ctx, c, ks, k)
		return detailMsg{key: k, d: d, err: err}
	}
}

func (m *Model) onDetail(msg detailMsg) {
	if m.detail == nil || msg.key != m.detail.key {
		return
	}
	m.detail.err = msg.err
	if msg.err == nil {
		d := msg.d
		m.detail.d = &d
	}
	m.detail.fetchedAt = m.now()
	m.renderDetail()
}

func (m *Model) onDetailKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.keys
	switch {
	case key.Matches(msg, k.Back):
		m.screen, m.detail = screenRecords, nil
		return nil
	case key.Matches(msg, k.Reveal):
		m.detail.reveal = !m.detail.reveal
		m.renderDetail()
		return nil
	case key.Matches(msg, k.Rescan):
		return m.fetchDetail(m.detail.ks, m.detail.key)
	case key.Matches(msg, k.CopyKey):
		return m.copyKey()
	case key.Matches(msg, k.CopyCommand):
		return m.copyCommand()
	case k.isWriteKey(msg) && !m.canWrite():
		m.status = m.readOnlyHint()
		return nil
	case key.Matches(msg, k.Fail):
		return m.openDialogOn(actions.KindFail, []inspect.Record{m.detail.shown()})
	case key.Matches(msg, k.Reconcile):
		return m.openDialogOn(actions.KindReconcile, []inspect.Record{m.detail.shown()})
	case key.Matches(msg, k.Expire):
		return m.openDialogOn(actions.KindExpire, []inspect.Record{m.detail.shown()})
	case key.Matches(msg, k.Top):
		m.vp.GotoTop()
		return nil
	case key.Matches(msg, k.Bottom):
		m.vp.GotoBottom()
		return nil
	}
	var cmd tea.Cmd
	m.vp, cmd = m.vp.Update(msg)
	return cmd
}

// renderDetail rebuilds the detail text (on fetch, reveal, resize, and the
// one-second tick that counts the TTL down).
func (m *Model) renderDetail() {
	ds := m.detail
	if ds == nil {
		return
	}
	s := m.styles
	var b strings.Builder
	line := func(label, value string) {
		b.WriteString(hang(s.Bold.Render(fmt.Sprintf("%-12s", label))+" ", value, m.width) + "\n")
	}
	r := ds.scanned
	elapsed := time.Duration(0)
	if ds.d != nil {
		r = ds.d.Record
		elapsed = m.now().Sub(ds.fetchedAt)
	}
	line("KEY", inspect.Sanitize(r.Key))
	ks := r.Keyspace
	line("KEYSPACE", fmt.Sprintf("%s (match %s, schema %s)", inspect.Sanitize(ks.Name), inspect.Sanitize(ks.Match), ks.Schema.Name))
	switch {
	case ds.err != nil:
		line("", s.Error.Render("could not fetch the record: "+inspect.Sanitize(ds.err.Error())+" — showing the scan's view (r retries)"))
	case ds.d == nil && m.opts.Scan.Snapshot != nil:
		line("", s.Dim.Render("as the snapshot held it: the fields idemctl reads (there is no server to fetch the rest from)"))
	case ds.d == nil:
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
	if ds.d != nil && ds.d.Encoding != "" {
		mem += "   encoding " + inspect.Sanitize(ds.d.Encoding)
	}
	line("MEMORY", mem+"   type "+r.Type.String())
	line("AGE", ageExplain(&r, ks, elapsed))
	if r.State == inspect.StateProcessing {
		why := staleExplain(&r, ks, elapsed)
		if r.Stale() && m.canWrite() {
			why += " (F force-fails, R reconciles, here)"
		}
		line("STALE?", why)
	}
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
				b.WriteString(hang(fmt.Sprintf("  %-20s ", flagName(fi.Flag)), fi.Explain, m.width) + "\n")
			}
		}
	}
	if ds.d != nil {
		m.writeFields(&b, ds)
	}
	m.vp.SetContent(b.String())
}

// hang writes prefix then value wrapped to width, continuation lines
// starting under the value's first character, never under the label. Each
// line is wrapped once, here. Too narrow for that, the whole line wraps.
func hang(prefix, value string, width int) string {
	const breaks = " /:,"
	pw := ansi.StringWidth(prefix)
	if pw+ansi.StringWidth(value) <= width {
		return prefix + value
	}
	if width-pw < 12 {
		return ansi.Wrap(prefix+value, width, breaks)
	}
	lines := strings.Split(ansi.Wrap(value, width-pw, breaks), "\n")
	pad := strings.Repeat(" ", pw)
	for i := 1; i < len(lines); i++ {
		lines[i] = pad + strings.TrimLeft(lines[i], " ")
	}
	return prefix + strings.Join(lines, "\n")
}

func (m *Model) writeFields(b *strings.Builder, ds *detailState) {
	s := m.styles
	d := ds.d
	title := fmt.Sprintf("FIELDS (%s of %s)", count(len(d.Fields)), count(d.FieldCount))
	if d.Partial != "" {
		title += " — " + d.Partial + ": only the schema's fields"
	}
	b.WriteString("\n" + s.Title.Render(title) + "\n")
	respField := ds.ks.Schema.Response
	isString := d.Record.Type == inspect.TypeString
	var response string
	for _, f := range d.Fields {
		v := f.Value
		secret := f.Name == respField || isString && d.Record.ResponseLen > 0
		switch {
		case secret && !ds.reveal:
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
		b.WriteString(hang(fmt.Sprintf("  %-16s ", inspect.Sanitize(f.Name)), v, m.width) + "\n")
	}
	if response != "" {
		b.WriteString("\n" + s.Title.Render("RESPONSE (v hides)") + "\n")
		pretty, _ := inspect.PrettyJSON(response)
		for _, l := range strings.Split(pretty, "\n") {
			l = inspect.Sanitize(l)
			body := strings.TrimLeft(l, " ")
			// A long JSON line continues under its own first character.
			b.WriteString(hang("  "+l[:len(l)-len(body)], body, m.width) + "\n")
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func liveTTL(ttl int64, elapsed time.Duration) string {
	switch {
	case ttl == -1:
		return "none — this key never expires"
	case ttl < 0:
		return "unknown (PTTL could not be read)"
	}
	left := ttl - elapsed.Milliseconds()
	if left <= 0 {
		return "expired (refetch with r)"
	}
	return units.FormatMs(left) + " left"
}

// ageExplain says how old the record is and how that was derived.
func ageExplain(r *inspect.Record, ks *inspect.Keyspace, elapsed time.Duration) string {
	if r.AgeMs < 0 {
		switch {
		case r.State != inspect.StateProcessing && ks.Schema.AgeFromTTL:
			return "unknown: the TTL was reset when the record completed, and no timestamp is stored"
		case r.TTLms == -1:
			return "unknown: no TTL to derive it from and no timestamp stored"
		case r.AgeGap() == inspect.AgeGapTTLAboveReserve:
			return fmt.Sprintf("unknown: its TTL (%s) is above the configured reserve TTL (%s), so the application reserves with a longer one: set reserve_ttl to it (idemctl doctor proposes a value)",
				units.FormatMs(r.TTLms), units.FormatMs(ks.ReserveTTL.Milliseconds()))
		default:
			return "unknown: no timestamp stored and the TTL does not reveal it"
		}
	}
	age := units.FormatMs(r.AgeMs + elapsed.Milliseconds())
	switch r.AgeSource {
	case inspect.AgeTTL:
		return fmt.Sprintf("%s — from the TTL: reserve TTL %s − remaining TTL %s at read (the reserve step sets the TTL and stores no timestamp)",
			age, units.FormatMs(ks.ReserveTTL.Milliseconds()), units.FormatMs(r.TTLms))
	case inspect.AgeField:
		return age + " — from the record's creation timestamp, against the Redis server's clock"
	case inspect.AgeDeadline:
		return fmt.Sprintf("%s — from the stored deadline: processing timeout %s − time left to the deadline",
			age, units.FormatMs(ks.ProcessingTimeout.Milliseconds()))
	}
	return age
}

func staleExplain(r *inspect.Record, ks *inspect.Keyspace, elapsed time.Duration) string {
	timeout := units.FormatMs(ks.ProcessingTimeout.Milliseconds())
	switch {
	case r.Stale() && r.DeadlineMs > 0:
		return "yes: its processing deadline has passed — the worker probably crashed before completing"
	case r.Stale():
		return fmt.Sprintf("yes: processing for %s, longer than the processing timeout %s — the worker probably crashed after RESERVE; check the source of truth, then force-fail or reconcile",
			units.FormatMs(r.AgeMs+elapsed.Milliseconds()), timeout)
	case r.Flags.Has(inspect.FlagProcessingNoTTL):
		return "cannot tell its age, but it has no TTL: every retry is blocked until someone repairs it"
	case r.AgeMs < 0:
		return "unknown: its age cannot be derived"
	case ks.ProcessingTimeout <= 0:
		return "no processing timeout configured for this keyspace"
	}
	return fmt.Sprintf("no: %s old, within the processing timeout %s", units.FormatMs(r.AgeMs+elapsed.Milliseconds()), timeout)
}
