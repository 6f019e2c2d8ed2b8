package common

import (
	"image/color"

	"charm.land/lipgloss/v2"

	"github.com/idemctl/idemctl/inspect"
)

// Styles are computed once per background change, never per frame.
type Styles struct {
	Header, Badge, WarnBadge, DangerBadge lipgloss.Style
	Title, Dim, Bold, Selected, ColHead   lipgloss.Style
	Banner, Error, OK, HelpLine           lipgloss.Style
	State                                 [6]lipgloss.Style
	Stale, Bar                            lipgloss.Style
}

// NewStyles builds styles for a dark or light background; noColor keeps
// only bold and reverse (NO_COLOR).
func NewStyles(dark, noColor bool) Styles {
	ld := lipgloss.LightDark(dark)
	c := func(light, darkC string) color.Color { return ld(lipgloss.Color(light), lipgloss.Color(darkC)) }
	s := Styles{
		Header:   lipgloss.NewStyle().Bold(true),
		Title:    lipgloss.NewStyle().Bold(true),
		Bold:     lipgloss.NewStyle().Bold(true),
		Dim:      lipgloss.NewStyle().Faint(true),
		ColHead:  lipgloss.NewStyle().Bold(true).Underline(true),
		Selected: lipgloss.NewStyle().Reverse(true),
		HelpLine: lipgloss.NewStyle().Faint(true),
		Banner:   lipgloss.NewStyle().Bold(true).Reverse(true),
		Error:    lipgloss.NewStyle().Bold(true),
		OK:       lipgloss.NewStyle(),
		Bar:      lipgloss.NewStyle(),
	}
	s.Badge = lipgloss.NewStyle().Bold(true).Padding(0, 1).Reverse(true)
	s.WarnBadge, s.DangerBadge = s.Badge, s.Badge
	s.Stale = lipgloss.NewStyle().Bold(true)
	for i := range s.State {
		s.State[i] = lipgloss.NewStyle()
	}
	if noColor {
		return s
	}
	s.Header = s.Header.Foreground(c("#1f2937", "#e5e7eb"))
	s.Title = s.Title.Foreground(c("#1d4ed8", "#93c5fd"))
	s.Selected = lipgloss.NewStyle().Background(c("#dbeafe", "#1e3a5f")).Foreground(c("#111827", "#f9fafb"))
	s.Badge = lipgloss.NewStyle().Bold(true).Padding(0, 1).Background(c("#d1fae5", "#065f46")).Foreground(c("#064e3b", "#ecfdf5"))
	s.WarnBadge = s.Badge.Background(c("#fef3c7", "#92400e")).Foreground(c("#78350f", "#fffbeb"))
	s.DangerBadge = s.Badge.Background(c("#fee2e2", "#991b1b")).Foreground(c("#7f1d1d", "#fef2f2"))
	s.Banner = lipgloss.NewStyle().Bold(true).Background(c("#fee2e2", "#7f1d1d")).Foreground(c("#7f1d1d", "#fef2f2"))
	s.Error = s.Error.Foreground(c("#b91c1c", "#fca5a5"))
	s.OK = s.OK.Foreground(c("#047857", "#6ee7b7"))
	s.Stale = s.Stale.Foreground(c("#b91c1c", "#f87171"))
	s.Bar = s.Bar.Foreground(c("#2563eb", "#60a5fa"))
	s.State[inspect.StateProcessing] = lipgloss.NewStyle().Foreground(c("#b45309", "#fbbf24"))
	s.State[inspect.StateSucceeded] = lipgloss.NewStyle().Foreground(c("#047857", "#34d399"))
	s.State[inspect.StateFailed] = lipgloss.NewStyle().Foreground(c("#b91c1c", "#f87171"))
	s.State[inspect.StateReconciled] = lipgloss.NewStyle().Foreground(c("#6d28d9", "#c4b5fd"))
	s.State[inspect.StateExpired] = lipgloss.NewStyle().Faint(true)
	s.State[inspect.StateUnknown] = lipgloss.NewStyle().Foreground(c("#be185d", "#f9a8d4"))
	return s
}
