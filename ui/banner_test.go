package ui

import (
	"strings"
	"testing"
)

// flatText is s with every run of blanks one space: a wrapped text reads
// as its words.
func flatText(s string) string { return strings.Join(strings.Fields(s), " ") }

// Issue 46, finding 4: at 80×24 the cannot-judge banner is wrapped, not
// cut: folded to two lines that say w shows the rest, and whole, its
// cause and its fix, after w; the help names w.
func TestWarningBannerReadableAt80(t *testing.T) {
	ks := testKeyspace(t)
	m := newTestModel(t, 80, 24, fixture(ks, 70)) // stuck records: their age cannot be judged
	text := m.chrome.gapBanner()
	if !strings.Contains(text, "; fix: ") || len(text) < 2*80 {
		t.Fatalf("the fixture's banner fits one line: %q", text)
	}
	for _, sc := range []string{"Records", "Overview"} {
		if sc == "Overview" {
			press(m, "tab", "tab", "tab")
		}
		folded := screenText(m)
		if !strings.Contains(folded, "w: the whole warning") || strings.Contains(flatText(folded), flatText(text)) {
			t.Fatalf("%s: the folded banner does not say w shows it whole:\n%s", sc, folded)
		}
		press(m, "w")
		whole := screenText(m)
		if !strings.Contains(flatText(whole), flatText(text)) {
			t.Fatalf("%s: after w the banner is not whole (%q):\n%s", sc, text, whole)
		}
		checkFrame(t, m)
		press(m, "w")
		if screenText(m) != folded {
			t.Fatalf("%s: w again did not fold the banner:\n%s", sc, screenText(m))
		}
	}
	press(m, "?")
	if help := screenText(m); !strings.Contains(help, "w whole warning banner") {
		t.Fatalf("the help does not name w:\n%s", help)
	}
}

// w with no banner cut short says so, and changes nothing else.
func TestWarningKeyWithoutBanner(t *testing.T) {
	m := newTestModel(t, 160, 40, timelineFixture(testKeyspace(t), 10))
	before := m.bodyHeight()
	press(m, "w")
	if m.chrome.bannerOpen || m.bodyHeight() != before || !strings.Contains(screenText(m), "no warning is cut short") {
		t.Fatalf("w without a cut banner: open %v, body %d (was %d):\n%s", m.chrome.bannerOpen, m.bodyHeight(), before, screenText(m))
	}
}
