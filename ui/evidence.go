package ui

import (
	"fmt"
	"time"

	"github.com/idemctl/idemctl/inspect"
)

// gapCache holds the cannot-judge banners for one state of the aggregate,
// so a frame costs no Report() while nothing changed.
type gapCache struct {
	stats *inspect.Stats
	total int64
	at    time.Time
	texts []string
}

// gapBanners are the Overview and Records banners: what the counts on
// screen cannot back (processing records of unknown age, undecoded
// keyspaces), each cause with its fix. nil when every verdict is backed.
func (ch *chrome) gapBanners() []string {
	c := &ch.gaps
	if c.stats == ch.stats && c.total == ch.stats.Total() && c.at.Equal(ch.scan.lastComplete) {
		return c.texts
	}
	*c = gapCache{stats: ch.stats, total: ch.stats.Total(), at: ch.scan.lastComplete}
	var gaps []inspect.Gap
	for _, g := range ch.stats.Report().CannotJudge {
		if g.Kind != inspect.GapScanIncomplete { // the connection banner says that
			gaps = append(gaps, g)
		}
	}
	for i, g := range gaps {
		text := inspect.Sanitize(g.String())
		if len(gaps) > 1 {
			text = fmt.Sprintf("(%d of %d) %s", i+1, len(gaps), text)
		}
		c.texts = append(c.texts, text)
	}
	return c.texts
}

// gapBanner is the first of the gap banners, "" when there is none.
func (ch *chrome) gapBanner() string {
	if t := ch.gapBanners(); len(t) > 0 {
		return t[0]
	}
	return ""
}

// showsGapBanner: the screens whose counts the banner qualifies.
func (m *Model) showsGapBanner() bool {
	return (m.screen == screenOverview || m.screen == screenRecords) && m.dialog == nil && !m.keyHelp.open && m.chrome.gapBanner() != ""
}
