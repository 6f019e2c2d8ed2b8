package ui

import (
	"strings"

	"github.com/idemctl/idemctl/ui/common"
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
func (p *pager) show(c *shared, body string, h int) string {
	if p.max > 0 && p.scroll == p.max {
		p.scroll = common.Far
	}
	out := c.ScrollBy(body, &p.scroll, h)
	p.max = max(strings.Count(body, "\n")+1-h, 0)
	return out
}
