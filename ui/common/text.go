package common

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/idemctl/idemctl/internal/units"
)

// Every line a screen draws is cut to the terminal's width, never
// wrapped by it: these fit a text to a column.

// Fit pads or cuts s to exactly w cells (cutting on the right).
func Fit(s string, w int) string {
	sw := ansi.StringWidth(s)
	if sw > w {
		return ansi.Truncate(s, w, "…")
	}
	return s + strings.Repeat(" ", w-sw)
}

// FitLeft pads or cuts s to w cells, keeping its end: key tails tell records apart.
func FitLeft(s string, w int) string {
	sw := ansi.StringWidth(s)
	if sw > w {
		return ansi.TruncateLeft(s, sw-w+1, "…")
	}
	return s + strings.Repeat(" ", w-sw)
}

// FitMiddle pads or cuts s to w cells, keeping its head and its tail.
func FitMiddle(s string, w int) string {
	sw := ansi.StringWidth(s)
	if sw <= w {
		return s + strings.Repeat(" ", w-sw)
	}
	if w < 8 {
		return FitLeft(s, w)
	}
	head := (w - 1) * 2 / 5
	return ansi.Truncate(s, head, "") + "…" + ansi.TruncateLeft(s, sw-(w-1-head), "")
}

// FitRight right-aligns s in w cells, cut on the right when longer.
func FitRight(s string, w int) string {
	sw := ansi.StringWidth(s)
	if sw >= w {
		return ansi.Truncate(s, w, "")
	}
	return strings.Repeat(" ", w-sw) + s
}

// Count is units.FormatCount for any integer: every number the TUI shows is grouped.
func Count[T int | int64](n T) string { return units.FormatCount(int64(n)) }

// WrapHang is prefix then value wrapped at spaces to width, continuation
// lines under the value (hang also breaks after : and /, which may leave
// a line one cell too wide).
func WrapHang(prefix, value string, width int) string {
	pw := ansi.StringWidth(prefix)
	lines := strings.Split(ansi.Wrap(value, max(width-pw, 8), " "), "\n")
	pad := strings.Repeat(" ", pw)
	for i := 1; i < len(lines); i++ {
		lines[i] = pad + strings.TrimLeft(lines[i], " ")
	}
	return prefix + strings.Join(lines, "\n")
}

// Relabel is b with another description, on only while on holds.
func Relabel(b key.Binding, desc string, on bool) key.Binding {
	r := key.NewBinding(key.WithKeys(b.Keys()...), key.WithHelp(b.Help().Key, desc))
	r.SetEnabled(on && b.Enabled())
	return r
}

// ScrollBy shows body from line *off, clamping *off so the last page of h
// lines stays full. When more follows the page, its last line says so and
// which keys scroll: a newcomer must not take the page for the whole
// screen.
func (c *Common) ScrollBy(body string, off *int, h int) string {
	lines := strings.Split(body, "\n")
	*off = min(max(*off, 0), max(len(lines)-h, 0))
	lines = lines[*off:]
	if len(lines) > h && h > 1 {
		lines = append(lines[:h-1:h-1], c.MoreBelow(len(lines)-h+1))
	}
	return strings.Join(lines, "\n")
}

// MoreBelow is the last line of a page with n more lines under it.
func (c *Common) MoreBelow(n int) string {
	return c.Styles.Dim.Render(Fit(fmt.Sprintf("↓ %s more lines · j/↓ pgdn scroll · G the end", Count(n)), c.Width))
}
