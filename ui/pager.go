package ui

import (
	"fmt"
	"strings"
)

// pager is the scroll of a page drawn whole and shown a body at a time
// (the Overview, Stats, Writes and Doctor screens).
type pager struct {
	scroll int
	max    int // the largest scroll of the page last drawn
}

// show applies the scroll to body, clamped to it. A page shown to its end
// stays at its end as it grows (a refresh adds lines), and is otherwise
// kept where the keys left it: nothing but a key moves it.
func (p *pager) show(c *common, body string, h int) string {
	if p.max > 0 && p.scroll == p.max {
		p.scroll = far
	}
	out := c.scrollBy(body, &p.scroll, h)
	p.max = max(strings.Count(body, "\n")+1-h, 0)
	return out
}

// scrollBy shows body from line *off, clamping *off so the last page of h
// lines stays full. When more follows the page, its last line says so and
// which keys scroll: a newcomer must not take the page for the whole
// screen.
func (c *common) scrollBy(body string, off *int, h int) string {
	lines := strings.Split(body, "\n")
	*off = min(max(*off, 0), max(len(lines)-h, 0))
	lines = lines[*off:]
	if len(lines) > h && h > 1 {
		lines = append(lines[:h-1:h-1], c.moreBelow(len(lines)-h+1))
	}
	return strings.Join(lines, "\n")
}

// moreBelow is the last line of a page with n more lines under it.
func (c *common) moreBelow(n int) string {
	return c.styles.Dim.Render(fit(fmt.Sprintf("↓ %s more lines · j/↓ pgdn scroll · G the end", count(n)), c.width))
}
