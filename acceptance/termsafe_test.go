package acceptance

import (
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// invisibleText is text from Redis that hides or reorders what a terminal
// shows: a bidi mark, Hangul fillers, the Mongolian vowel separator, tag
// characters, a no-break space, a lone variation selector, a line separator.
var invisibleText = []string{"\u061c", "\u3164", "\u115f", "\u1160", "\uffa0", "\u180e", "\U000e0041", "\U000e007f",
	"\u00a0", "\ufe0f", "\u2028", "\u200d", "\u2066"}

// Every path where text from Redis reaches a terminal escapes invisible
// and reordering code points, and a key holding the text \x1b[31m prints
// differently from one holding a real ESC: the table, ndjson, stats' top
// values.
func TestInvisibleTextNeverReachesTheTerminal(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	ctx := t.Context()
	p := "atlasmart:ch23:idem:"
	for i, s := range invisibleText {
		c.HSet(ctx, p+"cust"+s+"x:POST:/o:r"+strconv.Itoa(i), "state", "PROCESSING", "fingerprint", "fp"+s)
	}
	c.HSet(ctx, p+"real\x1b[31m:POST:/o:esc", "state", "PROCESSING", "fingerprint", "a")
	c.HSet(ctx, p+`text\x1b[31m:POST:/o:esc`, "state", "PROCESSING", "fingerprint", "a")
	for _, cmd := range [][]string{{"scan", "-o", "table"}, {"scan", "-o", "ndjson"}, {"stats", "--top", "50"}, {"stats", "--top", "50", "-o", "json"}} {
		r := clitest.Run(t, nil, append(cmd, "--url", srv.URL(0), "--preset", "atlasmart")...)
		r.MustCode(t, 0)
		for _, s := range invisibleText {
			if strings.Contains(r.Stdout, s) {
				t.Errorf("%s: %U reached the output:\n%s", strings.Join(cmd, " "), []rune(s)[0], r.Stdout)
			}
		}
		if strings.Contains(r.Stdout, "\x1b") {
			t.Errorf("%s: a raw ESC reached the output", strings.Join(cmd, " "))
		}
		if cmd[0] == "scan" && cmd[2] == "table" {
			real, text := strings.Count(r.Stdout, `real\x1b[31m`), strings.Count(r.Stdout, `text\\x1b[31m`)
			if real != 1 || text != 1 {
				t.Errorf("a real ESC and the text \\x1b are not told apart (%d, %d):\n%s", real, text, r.Stdout)
			}
		}
	}
}

// detect's draft quotes what it takes from Redis with Sanitize's escapes,
// which YAML reads back: the terminal sees no raw control or invisible
// character, and the pasted YAML holds the exact field names and values.
func TestDetectDraftIsSafeAndExact(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	ctx := t.Context()
	state := "in \"prog\\ress\u061c"
	for i := range 3 {
		c.HSet(ctx, "draft:"+strconv.Itoa(i), "state", state, "fp\x1b\u3164", strings.Repeat("ab", 32))
	}
	r := clitest.Run(t, nil, "detect", "--url", srv.URL(0), "--match", "draft:*")
	r.MustCode(t, 0)
	for _, bad := range []string{"\x1b", "\u061c", "\u3164"} {
		if strings.Contains(r.Stdout, bad) {
			t.Fatalf("%q reached the terminal:\n%s", bad, r.Stdout)
		}
	}
	i := strings.Index(r.Stdout, "schemas:")
	var doc struct {
		Schemas map[string]struct {
			State struct {
				Field string
				Map   map[string]string
			}
			Fingerprint string
		}
	}
	if err := yaml.Unmarshal([]byte(r.Stdout[i:]), &doc); err != nil {
		t.Fatalf("the draft is not YAML: %v\n%s", err, r.Stdout[i:])
	}
	d := doc.Schemas["detected"]
	if _, ok := d.State.Map[state]; d.State.Field != "state" || !ok || d.Fingerprint != "fp\x1b\u3164" {
		t.Fatalf("the draft does not read back exactly: %+v\n%s", d, r.Stdout[i:])
	}
}
