package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/idemctl/idemctl/internal/testkit/clitest"
)

var (
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdHeading = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
	mdFence   = regexp.MustCompile("(?ms)^```.*?^```")
)

// Every relative link of the README and docs/ reaches a file that exists,
// and every #anchor a heading of that file: moving text between pages must
// not leave the reader at a dead end.
func TestDocLinksResolve(t *testing.T) {
	pages, _ := filepath.Glob(filepath.Join(clitest.RepoRoot, "docs", "*.md"))
	gen, _ := filepath.Glob(filepath.Join(clitest.RepoRoot, "docs", "commands", "*.md"))
	pages = append(append([]string{filepath.Join(clitest.RepoRoot, "README.md")}, pages...), gen...)
	anchors := map[string]map[string]bool{}
	for _, p := range pages {
		text := readDoc(t, p)
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			dest := p
			if file != "" {
				dest = filepath.Join(filepath.Dir(p), file)
			}
			if _, err := os.Stat(dest); err != nil {
				t.Errorf("%s links to %s: no such file", rel(p), target)
				continue
			}
			if anchor == "" {
				continue
			}
			if anchors[dest] == nil {
				anchors[dest] = headingAnchors(readDoc(t, dest))
			}
			if !anchors[dest][anchor] {
				t.Errorf("%s links to %s: %s has no heading #%s", rel(p), target, rel(dest), anchor)
			}
		}
	}
}

// The README is for people: the two commands first, then a page of reading.
func TestReadmeIsShort(t *testing.T) {
	text := readDoc(t, filepath.Join(clitest.RepoRoot, "README.md"))
	if n := strings.Count(text, "\n"); n > 300 {
		t.Errorf("README.md is %d lines: keep it under 300 and move the detail to docs/", n)
	}
	first := strings.SplitN(text, "```", 3)
	if len(first) < 3 || !strings.Contains(first[1], "go run . demo") || !strings.Contains(first[1], "bash .ci/test") {
		t.Errorf("README.md's first block is not the two commands (go run . demo, bash .ci/test)")
	}
	ci := readDoc(t, filepath.Join(clitest.RepoRoot, ".ci", "run"))
	if !strings.Contains(ci, "bash .ci/test") {
		t.Errorf(".ci/run does not call the README's test command .ci/test:\n%s", ci)
	}
}

func readDoc(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// headingAnchors are the anchors GitHub gives a page's headings: lower
// case, punctuation dropped, spaces as hyphens.
func headingAnchors(text string) map[string]bool {
	out := map[string]bool{}
	for _, m := range mdHeading.FindAllStringSubmatch(mdFence.ReplaceAllString(text, ""), -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 0x7f && r != '—' && r != '–' && r != '…':
				b.WriteRune(r)
			}
		}
		out[b.String()] = true
	}
	return out
}

func rel(p string) string {
	if r, err := filepath.Rel(clitest.RepoRoot, p); err == nil {
		return r
	}
	return p
}
