package ui

import (
	"strings"
	"testing"
)

// The table and the detail screen escape invisible and reordering code
// points from Redis (bidi mark, Hangul filler, tag character, Mongolian
// vowel separator), and a literal backslash, so \x1b typed into a key never
// looks like a real ESC.
func TestInvisibleTextEscapedOnScreen(t *testing.T) {
	recs := fixture(testKeyspace(t), 5)
	recs[0].Key = "k\u061cbidi\u3164fill\U000e0041tag\u180emvs\\x1b[31m"
	recs[0].Fingerprint = "fp\u115f"
	m := newTestModel(t, 200, 24, recs)
	raw := m.View().Content
	for _, s := range []string{"\u061c", "\u3164", "\U000e0041", "\u180e", "\u115f"} {
		if strings.Contains(raw, s) {
			t.Fatalf("%U reached the screen", []rune(s)[0])
		}
	}
	if !strings.Contains(screenText(m), `k\u061cbidi\u3164fill\U000e0041tag\u180emvs\\x1b[31m`) {
		t.Fatalf("the key is not shown escaped:\n%s", screenText(m))
	}
}
