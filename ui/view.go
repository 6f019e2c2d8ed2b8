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
)

// chromeLines is the height of header, progress line, status and help lines.
func (m *Model) chromeLines() int {
	n := 4
	if m.banner != "" {
		n++
	}
	if m.showsGapBanner() {
		n++
	}
	return n
}

func (m *Model) bodyHeight() int { return max(m.height-m.chromeLines(), 1) }

// View renders the whole screen; every piece is cut to the width so a small
// terminal never wraps.
func (m *Model) View() tea.View {
	var b strings.Builder
	b.WriteString(m.headerView())
	b.WriteString("\n")
	b.WriteString(m.progressView())
	if m.banner != "" {
		b.WriteString("\n")
		b.WriteString(m.styles.Banner.Render(fit(" ⚠ "+m.bannerText(), m.width)))
	}
	if m.showsGapBanner() {
		b.WriteString("\n")
		b.WriteString(m.styles.Banner.Render(fit(" ⚠ "+m.gapBanner(), m.width)))
	}
	b.WriteString("\n")
	body := ""
	switch {
	case m.dialog != nil:
		body = ansi.Wrap(m.dialogView(), m.width, " ,")
	case m.showHelp:
		body = m.helpView()
	case m.screen == screenRecords:
		body = m.recordsView()
	case m.screen == screenOverview:
		body = m.scrolled(m.overviewView())
	case m.screen == screenStats:
		body = m.scrolled(m.statsView())
	case m.screen == screenWrites:
		body = m.scrolled(m.writesView())
	case m.screen == screenDetail:
		body = m.vp.View()
	}
	b.WriteString(padLines(body, m.bodyHeight(), m.width))
	b.WriteString("\n")
	b.WriteString(m.statusView())
	b.WriteString("\n")
	b.WriteString(m.styles.HelpLine.Render(fit(m.help.ShortHelpView(m.contextHelp()), m.width)))
	v := tea.NewView(b.String())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "idemctl"
	if p := m.profileLabel(); p != "" {
		v.WindowTitle += " — " + p
	}
	return v
}

// bannerText leads with what the operator must know (the data is stale),
// then the cause, which may be cut on a narrow terminal.
func (m *Model) bannerText() string {
	if !m.dataStale {
		return m.banner
	}
	s := "connection problem: showing data"
	if !m.lastComplete.IsZero() {
		s += " from " + m.lastComplete.Format("15:04:05")
	}
	s += " (stale)"
	if m.backoff > 0 {
		s += fmt.Sprintf(", retry in %s", m.backoff)
	}
	return s + " · " + m.banner
}

// padLines makes body exactly h lines, each cut to w cells.
func padLines(body string, h, w int) string {
	lines := strings.Split(body, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for i, l := range lines {
		if ansi.StringWidth(l) > w {
			lines[i] = ansi.Truncate(l, w, "")
		}
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}

func (m *Model) profileLabel() string {
	if m.opts.Demo {
		return "demo"
	}
	return m.opts.Profile
}

func (m *Model) headerView() string {
	s := m.styles
	badge := s.Badge.Render("READ-ONLY")
	if m.canWrite() {
		if m.opts.Executor.Policy.Protected {
			badge = s.DangerBadge.Render("WRITES ENABLED · PROTECTED")
		} else {
			badge = s.WarnBadge.Render("WRITES ENABLED")
		}
	}
	user := m.opts.User
	if user == "" {
		user = "default"
	}
	names := make([]string, len(m.opts.Keyspaces))
	for i, ks := range m.opts.Keyspaces {
		names[i] = ks.Name
	}
	addr := strings.TrimPrefix(m.opts.Address, "redis://")
	ctx := fmt.Sprintf(" %s · %s · %s ", addr, inspect.Sanitize(user), inspect.Sanitize(strings.Join(names, ",")))
	if p := m.profileLabel(); p != "" {
		ctx = " " + p + " ·" + ctx
	}
	left := s.Header.Render("idemctl") + s.Dim.Render(" ·") + screenTabs(m)
	room := m.width - ansi.StringWidth(left) - ansi.StringWidth(badge)
	return left + fit(ctx, max(room, 0)) + badge
}

func screenTabs(m *Model) string {
	var parts []string
	for i, n := range screenNames {
		cur := screen(i) == m.screen || screen(i) == screenRecords && m.screen == screenDetail
		if cur {
			parts = append(parts, m.styles.Title.Render(n))
		} else {
			parts = append(parts, m.styles.Dim.Render(n))
		}
	}
	return " " + strings.Join(parts, m.styles.Dim.Render(" ")) + " "
}

// progressView is the scan line: keys, rate, elapsed; or when the data is from.
func (m *Model) progressView() string {
	run := m.run
	if run == nil {
		return ""
	}
	end := run.finished
	if end.IsZero() {
		end = m.now()
	}
	el := end.Sub(run.started)
	rate := 0.0
	if el > 0 {
		rate = float64(run.records) / el.Seconds()
	}
	var line string
	switch {
	case m.scanning():
		line = fmt.Sprintf("⟳ scanning: %s records · %s/s · %s", units.FormatCount(run.records), units.FormatCount(int64(rate)), fmtDur(el))
		if !run.live {
			line += fmt.Sprintf(" (refresh; showing %s records from %s)", units.FormatCount(int64(m.store.recs.Len())), m.lastComplete.Format("15:04:05"))
		}
		if len(m.opts.Keyspaces) > 1 {
			var per []string
			for _, ks := range m.opts.Keyspaces {
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
	default:
		line = fmt.Sprintf("✓ %s records in %s (%s/s) · read at %s", units.FormatCount(int64(m.store.recs.Len())), fmtDur(el),
			units.FormatCount(int64(rate)), run.finished.Format("15:04:05"))
		if incomplete(run.covs) {
			line = "✗ incomplete scan: " + line[len("✓ "):]
		}
		if nodes := nodeCount(run.covs); nodes > 1 {
			line += " · " + units.FormatCount(int64(nodes)) + " nodes"
		}
		if m.opts.Refresh > 0 {
			line += fmt.Sprintf(" · refresh every %s", m.opts.Refresh)
		}
	}
	return m.styles.Dim.Render(fit(line, m.width))
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
	if m.filtering {
		return fit(m.input.View(), m.width)
	}
	var parts []string
	if m.screen == screenRecords || m.screen == screenDetail {
		parts = append(parts, fmt.Sprintf("%s of %s", units.FormatCount(int64(len(m.store.view))), units.FormatCount(int64(m.store.recs.Len()))))
		if d := m.store.f.String(); d != "" {
			parts = append(parts, "filter: "+d)
		}
		if len(m.marks) > 0 {
			parts = append(parts, units.FormatCount(int64(len(m.marks)))+" marked")
		}
		if m.store.sortCol != colNone {
			dir := "↑"
			if m.store.sortDesc {
				dir = "↓"
			}
			parts = append(parts, "sort: "+columnNames[m.store.sortCol]+dir)
		}
	}
	if m.status != "" {
		parts = append(parts, m.status)
	}
	return fit(strings.Join(parts, " · "), m.width)
}

func (m *Model) contextHelp() []keyBinding {
	k := m.keys
	switch {
	case m.filtering, m.dialog != nil:
		return nil
	case m.screen == screenDetail:
		return []keyBinding{k.Back, k.Reveal, k.Rescan, k.Up, k.Down, k.Help, k.Quit}
	case m.screen == screenRecords && m.canWrite():
		return []keyBinding{k.Help, k.Filter, k.StaleOnly, k.Mark, k.Fail, k.Expire, k.Reconcile, k.Quit}
	case m.screen == screenRecords:
		return k.ShortHelp()
	}
	return []keyBinding{k.Help, k.NextScreen, k.Open, k.Rescan, k.Quit}
}

func (m *Model) helpView() string {
	return m.styles.Title.Render("Keys") + "  " + m.styles.Dim.Render("(any key closes)") + "\n\n" +
		m.help.FullHelpView(m.keys.FullHelp()) + "\n\n" +
		ansi.Wrap(m.styles.Dim.Render("Filter terms (/), all must match: text · glob* · principal=customer-42 · state=processing · flag=no_ttl · stale"), m.width, " ·")
}

// scrolled applies the overview/stats scroll offset, clamped to the content.
func (m *Model) scrolled(body string) string {
	lines := strings.Split(body, "\n")
	m.scroll = min(max(m.scroll, 0), max(len(lines)-m.bodyHeight(), 0))
	return strings.Join(lines[m.scroll:], "\n")
}

func fmtDur(d time.Duration) string { return units.FormatMs(d.Milliseconds()) }
