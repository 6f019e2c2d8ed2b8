package ui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
	"github.com/idemctl/idemctl/ui/common"
)

// The warning banners under the header: the connection's (every screen),
// the cannot-judge ones (Overview and Records) and the held one (the table
// holds part of the scan). Each is wrapped, never cut: it takes at most
// bannerFolded lines, the last of them saying w shows the rest; w unfolds
// every banner whole (and the other cannot-judge causes), w again folds
// them.

// bannerFolded is how many lines a banner takes until w unfolds it.
const bannerFolded = 2

// bannerMore ends a folded banner's last line.
const bannerMore = " … w: the whole warning"

// bannerTexts are the banners to show, most urgent first; gapsShown:
// the screen's counts are ones the cannot-judge banners qualify.
func (ch *chrome) bannerTexts(gapsShown bool) []string {
	var out []string
	if ch.scan.banner != "" {
		out = append(out, ch.bannerText())
	}
	if ch.Opts.Notice != "" { // what opening the session warned of (a hook that cannot run)
		out = append(out, inspect.Sanitize(units.OneLine(ch.Opts.Notice)))
	}
	if gapsShown {
		gaps := ch.gapBanners()
		if !ch.bannerOpen {
			gaps = gaps[:1]
		}
		out = append(out, gaps...)
	}
	if ch.store.dropped > 0 {
		out = append(out, ch.heldBanner())
	}
	return out
}

// bannerLines are the banners as drawn: each wrapped under its ⚠ and
// folded to bannerFolded lines unless w unfolded them. folded says some
// banner has more to show.
func (ch *chrome) bannerLines(gapsShown bool) (lines []string, folded bool) {
	texts := ch.bannerTexts(gapsShown)
	c := &ch.bannerMemo
	if slices.Equal(c.texts, texts) && c.width == ch.Width && c.open == ch.bannerOpen {
		return c.lines, c.folded // bodyHeight asks for them a few times a frame
	}
	for _, text := range texts {
		ls, cut := foldBanner(text, ch.Width, !ch.bannerOpen)
		lines = append(lines, ls...)
		folded = folded || cut
	}
	*c = bannerMemo{texts: texts, width: ch.Width, open: ch.bannerOpen, lines: lines, folded: folded}
	return lines, folded
}

// bannerMemo is the banners as last drawn, for the texts, width and fold
// they were drawn at.
type bannerMemo struct {
	texts  []string
	width  int
	open   bool
	lines  []string
	folded bool
}

// foldBanner wraps text under " ⚠ " to width, at spaces; with fold, a
// text longer than bannerFolded lines ends its last one in bannerMore,
// cut at a space. cut says it was.
func foldBanner(text string, width int, fold bool) (lines []string, cut bool) {
	const lead, pad = " ⚠ ", "   "
	room := max(width-ansi.StringWidth(lead), 8)
	words := strings.Split(ansi.Wrap(text, room, " "), "\n")
	if fold && len(words) > bannerFolded {
		rest := strings.Join(words[bannerFolded-1:], " ")
		last := strings.Split(ansi.Wrap(rest, max(room-ansi.StringWidth(bannerMore), 8), " "), "\n")[0]
		words = append(words[:bannerFolded-1:bannerFolded-1], strings.TrimRight(last, " ")+bannerMore)
		cut = true
	}
	for i, w := range words {
		p := pad
		if i == 0 {
			p = lead
		}
		lines = append(lines, common.Fit(p+w, width))
	}
	return lines, cut
}

// toggle is w: the banners whole, or folded again; it reports whether
// they changed (the body then gives them their lines).
func (ch *chrome) toggle(gapsShown bool) bool {
	if _, folded := ch.bannerLines(gapsShown); !folded && !ch.bannerOpen {
		ch.Status = "no warning is cut short here (w shows a warning banner whole)"
		return false
	}
	ch.bannerOpen = !ch.bannerOpen
	return true
}

// heldBanner says, on every screen, that the table holds part of the scan.
func (ch *chrome) heldBanner() string {
	held := int64(ch.store.recs.Len())
	return fmt.Sprintf("listing %s of %s records (--max-records %s): every one needing attention; the other %s only in the counts",
		units.FormatCount(held), units.FormatCount(held+ch.store.dropped), units.FormatCount(int64(maxRecords(ch.Opts))), units.FormatCount(ch.store.dropped))
}

// bannerText leads with what the operator must know (the data is stale),
// then the cause.
func (ch *chrome) bannerText() string {
	if !ch.scan.dataStale {
		return ch.scan.banner
	}
	s := "connection problem: showing data"
	if !ch.scan.lastComplete.IsZero() {
		s += " from " + ch.scan.lastComplete.Format("15:04:05")
	}
	s += " (stale)"
	if ch.scan.backoff > 0 {
		s += fmt.Sprintf(", retry in %s", ch.scan.backoff)
	}
	return s + " · " + ch.scan.banner
}
