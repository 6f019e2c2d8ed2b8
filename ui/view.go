package ui

import (
	"fmt"
	"sort"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
	"github.com/idemctl/idemctl/ui/common"
)

// lines is the height of header, progress line, banners, status and help
// lines.
func (ch *chrome) lines(gapsShown bool) int {
	n := 4
	if ch.twoLineHeader {
		n++
	}
	banners, _ := ch.bannerLines(gapsShown)
	return n + len(banners)
}

// bodyHeight is what the chrome leaves the screen shown.
func (m *Model) bodyHeight() int { return max(m.Height-m.chrome.lines(m.showsGapBanner()), 1) }

// View renders the whole screen; every piece is cut to the width so a small
// terminal never wraps.
func (m *Model) View() tea.View {
	var b strings.Builder
	b.WriteString(m.chrome.headerView(m.screen))
	b.WriteString("\n")
	b.WriteString(m.chrome.progressView())
	banners, _ := m.chrome.bannerLines(m.showsGapBanner())
	for _, l := range banners {
		b.WriteString("\n" + m.Styles.Banner.Render(l))
	}
	b.WriteString("\n")
	body := ""
	switch {
	case m.dialog != nil:
		body = ansi.Wrap(m.show(m.dialog), m.Width, " ") // keys are already cut to fit: never split
	case m.keyHelp.open:
		body = m.show(m.keyHelp)
	case m.screen == screenRecords:
		body = m.recordsSized().View()
	case m.screen == screenOverview, m.screen == screenStats:
		body = m.show(m.drillShown())
	case m.screen == screenWrites:
		body = m.show(m.writes)
	case m.screen == screenDoctor:
		body = m.show(m.doctor)
	case m.screen == screenStreams:
		body = m.show(m.streams)
	case m.screen == screenDetail:
		body = m.detail.View() // sized on a resize only
	}
	b.WriteString(padLines(body, m.bodyHeight(), m.Width))
	b.WriteString("\n")
	b.WriteString(m.statusView())
	b.WriteString("\n")
	b.WriteString(m.helpLine())
	v := tea.NewView(b.String())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "idemctl"
	if p := m.profileLabel(); p != "" {
		v.WindowTitle += " — " + p
	}
	return v
}

// padLines makes body exactly h lines, each cut to w cells.
func padLines(body string, h, w int) string {
	lines := strings.Split(body, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for i, l := range lines {
		if ansi.StringWidth(l) > w { // the last guard: a cut must show
			lines[i] = ansi.Truncate(l, w, "…")
		}
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}

func (c *shared) profileLabel() string {
	if c.Opts.Demo {
		return "demo"
	}
	return c.Opts.Profile
}

// headerView is the top line. What must always show, whatever the width:
// the mode badge (can this session write?), the profile and the full
// server address (where a write would go), and the current screen. The
// rest gives way in this order as the terminal narrows: the keyspace
// names, the Redis user, the other screens' names, the program's name, and
// last the badge's long form. Only when even that does not fit is the
// address cut, in its middle.
func (ch *chrome) headerView(sc screen) string {
	if l := ch.scan.liveLabel(); l != ch.liveShown {
		ch.headerCache, ch.liveShown = [numAllScreens]string{}, l
	}
	if h := ch.headerCache[sc]; h != "" {
		return h
	}
	h := ch.renderHeader(sc)
	ch.headerCache[sc] = h
	return h
}

func (ch *chrome) renderHeader(sc screen) string {
	s := ch.Styles
	long, short := "READ-ONLY", "READ-ONLY"
	badgeStyle := s.Badge
	if ch.CanWrite() {
		long, short, badgeStyle = "WRITES ENABLED", "WRITES", s.WarnBadge
		if ch.Opts.Executor.Policy.Protected {
			long, short, badgeStyle = "WRITES ENABLED · PROTECTED", "WRITES·PROT", s.DangerBadge
		}
	}
	user := ch.Opts.User
	if user == "" {
		user = "default"
	}
	names := make([]string, len(ch.Opts.Keyspaces))
	for i, ks := range ch.Opts.Keyspaces {
		names[i] = ks.Name
	}
	where := strings.TrimPrefix(ch.Opts.Address, "redis://")
	if p := ch.profileLabel(); p != "" {
		where = inspect.Sanitize(p) + " · " + where
	}
	extra := []string{inspect.Sanitize(user), inspect.Sanitize(strings.Join(names, ","))}
	if ch.twoLineHeader {
		badge := ch.liveBadge() + badgeStyle.Render(long)
		if ansi.StringWidth(ch.tabs(sc, false))+ansi.StringWidth(badge)+1 > ch.Width {
			badge = ch.liveBadge() + badgeStyle.Render(short)
		}
		return ch.twoLines(sc, where, badge)
	}
	brand := s.Header.Render("idemctl") + s.Dim.Render(" · ")
	for _, v := range []struct {
		brand, allTabs bool
		extras         int
		badge          string
	}{
		{true, true, 2, long}, {true, true, 1, long}, {true, true, 0, long},
		{true, false, 0, long}, {false, false, 0, long}, {false, false, 0, short},
	} {
		left := ch.tabs(sc, v.allTabs)
		if v.brand {
			left = brand + left
		}
		ctx := " " + strings.Join(append([]string{where}, extra[:v.extras]...), " · ") + " "
		badge := ch.liveBadge() + badgeStyle.Render(v.badge)
		room := ch.Width - ansi.StringWidth(left) - ansi.StringWidth(badge)
		if ansi.StringWidth(ctx) <= room {
			return left + common.Fit(ctx, room) + badge
		}
	}
	// Too narrow for one line: the address gets a line of its own.
	return ch.twoLines(sc, where, ch.liveBadge()+badgeStyle.Render(short))
}

// liveBadge is the header's word on following ("" for a session that
// does not follow): LIVE or NOT LIVE; the scan line under it says why.
func (ch *chrome) liveBadge() string {
	switch l := ch.liveShown; {
	case l == "":
		return ""
	case l == "LIVE":
		return ch.Styles.Badge.Render(l) + " "
	}
	return ch.Styles.WarnBadge.Render("NOT LIVE") + " "
}

// twoLines is the narrow header: the screen and the badge, then the address.
func (ch *chrome) twoLines(sc screen, where, badge string) string {
	left := ch.tabs(sc, false)
	room := max(ch.Width-ansi.StringWidth(left)-ansi.StringWidth(badge), 0)
	return left + strings.Repeat(" ", room) + badge + "\n" + common.FitMiddle(where, ch.Width)
}

// tabs names the screens, the current one highlighted; compact, only
// the current one.
func (ch *chrome) tabs(sc screen, all bool) string {
	var parts []string
	for i, n := range screenNames {
		cur := screen(i) == sc || screen(i) == screenRecords && sc == screenDetail
		switch {
		case cur:
			parts = append(parts, ch.Styles.Title.Render(n))
		case all:
			parts = append(parts, ch.Styles.Dim.Render(n))
		}
	}
	return strings.Join(parts, ch.Styles.Dim.Render(" "))
}

// progressView is the scan line: keys, rate, elapsed; or when the data is from.
func (ch *chrome) progressView() string {
	run := ch.scan.run
	if run == nil {
		return ""
	}
	end := run.finished
	if end.IsZero() {
		end = ch.Now()
	}
	el := end.Sub(run.started)
	rate := 0.0
	if el > 0 {
		rate = float64(run.records) / el.Seconds()
	}
	var line string
	switch {
	case ch.scan.scanning():
		line = ch.scanningLine(run, el, rate)
	case run.stopped && run.live:
		line = fmt.Sprintf("✗ scan cancelled after %s records in %s: every count is partial · r rescans",
			units.FormatCount(run.records), fmtDur(el))
	case run.stopped:
		line = fmt.Sprintf("✗ refresh cancelled: showing %s records from %s · r rescans",
			units.FormatCount(int64(ch.store.recs.Len())), ch.scan.lastComplete.Format("15:04:05"))
	default:
		line = fmt.Sprintf("✓ %s records in %s (%s/s) · read at %s", units.FormatCount(int64(ch.store.recs.Len())), fmtDur(el),
			units.FormatCount(int64(rate)), run.finished.Format("15:04:05"))
		if incomplete(run.covs) {
			line = "✗ incomplete scan: " + line[len("✓ "):]
		}
		if nodes := nodeCount(run.covs); nodes > 1 {
			line += " · " + units.FormatCount(int64(nodes)) + " nodes"
		}
		if ch.Opts.Refresh > 0 && !ch.scan.following() {
			line += fmt.Sprintf(" · refresh every %s", ch.Opts.Refresh)
		}
		line = ch.withLive(line)
	}
	return ch.Styles.Dim.Render(common.Fit(line, ch.Width))
}

// withLive is the scan line with the word on following that fits: the
// mode or why not, else "not live" alone, else nothing (the header's
// badge still says it).
func (ch *chrome) withLive(line string) string {
	for _, l := range []string{ch.scan.liveLine(), " · not live"} {
		if ansi.StringWidth(line+l) <= ch.Width && (l != " · not live" || ch.scan.liveLabel() != "LIVE") {
			return line + l
		}
	}
	return line
}

// scanningLine is the scan line while a scan runs: records, rate, time,
// and the share done and time left once the SCAN cursors tell them.
func (ch *chrome) scanningLine(run *scanRun, el time.Duration, rate float64) string {
	line := fmt.Sprintf("⟳ scanning: %s records · %s/s · %s", units.FormatCount(run.records), units.FormatCount(int64(rate)), fmtDur(el))
	if run.done > 0 {
		// the share from the SCAN cursor, and the time left at this pace
		line = fmt.Sprintf("⟳ scanning: %.0f%% · %s records · %s/s · %s", run.done*100, units.FormatCount(run.records), units.FormatCount(int64(rate)), fmtDur(el))
		if left, ok := (inspect.Progress{Done: run.done, Records: run.records, Elapsed: el}).Left(); ok {
			line += " · " + fmtDur(left) + " left"
		}
	}
	if !run.live {
		line += fmt.Sprintf(" (refresh; shown: %s)", ch.scan.lastComplete.Format("15:04:05"))
	}
	if len(ch.Opts.Keyspaces) > 1 {
		var per []string
		for _, ks := range ch.Opts.Keyspaces {
			per = append(per, fmt.Sprintf("%s %s", ks.Name, units.FormatCount(run.perKS[ks.Name])))
		}
		line += " · " + strings.Join(per, " · ")
	}
	if len(run.perNode) > 1 {
		nodes := make([]string, 0, len(run.perNode))
		for n := range run.perNode {
			nodes = append(nodes, n)
		}
		sort.Strings(nodes)
		var per []string
		for _, n := range nodes {
			per = append(per, fmt.Sprintf("%s %s", n, units.FormatCount(run.perNode[n])))
		}
		line += " · nodes: " + strings.Join(per, " · ")
	}
	return line
}

func nodeCount(covs []inspect.Coverage) int {
	seen := map[string]bool{}
	for _, c := range covs {
		seen[c.Node] = true
	}
	return len(seen)
}

func incomplete(covs []inspect.Coverage) bool {
	for _, c := range covs {
		if !c.Complete {
			return true
		}
	}
	return false
}

func (m *Model) statusView() string {
	if status, _, ok := m.recordsSized().typedLines(); ok {
		return status
	}
	if m.cmdLine.open {
		return m.show(m.cmdLine)
	}
	if m.streams.Typing() {
		status, _ := m.streams.FilterLine()
		return status
	}
	var parts []string
	switch m.screen {
	case screenStreams:
		parts = m.streams.StatusParts()
	case screenRecords, screenDetail:
		parts = m.records.statusParts()
	}
	if m.Status != "" {
		// What the last key did comes first: on a narrow terminal the
		// counts, which the screen shows anyway, are what give way.
		parts = append([]string{m.Status}, parts...)
	}
	if len(parts) == 0 {
		return ""
	}
	// Whole parts or none: a part that does not fit is left out, not cut.
	line := parts[0]
	for _, p := range parts[1:] {
		if ansi.StringWidth(line+" · "+p) <= m.Width {
			line += " · " + p
		}
	}
	return common.Fit(line, m.Width)
}

// helpLine is the last line: the keys that work here, or while a filter is
// typed, why it was refused (the status line holds the input then).
func (m *Model) helpLine() string {
	if m.cmdLine.open {
		return m.cmdLine.footer()
	}
	if m.streams.Typing() {
		_, help := m.streams.FilterLine()
		return help
	}
	if _, help, ok := m.recordsSized().typedLines(); ok {
		return help
	}
	return m.Styles.HelpLine.Render(common.Fit(m.help.ShortHelpView(m.contextHelp()), m.Width))
}

func (m *Model) contextHelp() []common.KeyBinding {
	k := m.Keys
	switch {
	case m.records.typing(), m.dialog != nil:
		return nil
	case m.cmdLine.open:
		return nil
	case m.screen == screenStreams:
		return m.streams.Footer(m.help)
	case m.screen == screenDetail:
		return m.detail.footer()
	case m.screen == screenRecords:
		return m.records.footer()
	case m.screen == screenWrites && m.CanWrite():
		return m.writes.footer()
	}
	return []common.KeyBinding{k.Help, k.NextScreen, k.Open, k.Rescan, k.Quit}
}

func fmtDur(d time.Duration) string { return units.FormatMs(d.Milliseconds()) }
