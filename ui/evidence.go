package ui

import (
	"fmt"
	"time"

	"github.com/idemctl/idemctl/inspect"
)

// gapCache holds the cannot-judge banner for one state of the aggregate, so
// a frame costs no Report() while nothing changed.
type gapCache struct {
	stats *inspect.Stats
	total int64
	at    time.Time
	text  string
}

// gapBanner is the Overview and Records banner: what the counts on screen
// cannot back (processing records of unknown age, undecoded keyspaces), with
// the first cause and its fix. "" when every verdict is backed.
func (m *Model) gapBanner() string {
	c := &m.gaps
	if c.stats == m.stats && c.total == m.stats.Total() && c.at.Equal(m.lastComplete) {
		return c.text
	}
	*c = gapCache{stats: m.stats, total: m.stats.Total(), at: m.lastComplete}
	var gaps []inspect.Gap
	for _, g := range m.stats.Report().CannotJudge {
		if g.Kind != inspect.GapScanIncomplete { // the connection banner says that
			gaps = append(gaps, g)
		}
	}
	if len(gaps) == 0 {
		return ""
	}
	c.text = inspect.Sanitize(gaps[0].String())
	if len(gaps) > 1 {
		c.text = fmt.Sprintf("(1 of %d) %s", len(gaps), c.text)
	}
	return c.text
}

// showsGapBanner: the screens whose counts the banner qualifies.
func (m *Model) showsGapBanner() bool {
	return (m.screen == screenOverview || m.screen == screenRecords) && m.dialog == nil && !m.showHelp && m.gapBanner() != ""
}
