package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idemctl/idemctl/internal/clitest"
)

// idemctl man DIR writes a page per command from the same definitions as
// --help, and groff renders each without a warning.
func TestManPages(t *testing.T) {
	dir := t.TempDir()
	clitest.Run(t, nil, "man", dir).MustCode(t, 0)
	for _, name := range []string{"idemctl", "idemctl-scan", "idemctl-stats", "idemctl-check", "idemctl-detect", "idemctl-exporter",
		"idemctl-ui", "idemctl-expire", "idemctl-fail", "idemctl-reconcile", "idemctl-seed", "idemctl-presets", "idemctl-demo",
		"idemctl-config", "idemctl-config-path", "idemctl-config-view", "idemctl-version", "idemctl-completion",
		"idemctl-completion-bash", "idemctl-help"} {
		b, err := os.ReadFile(filepath.Join(dir, name+".1"))
		if err != nil {
			t.Errorf("no page for %s: %v", name, err)
			continue
		}
		page := string(b)
		if !strings.HasPrefix(page, ".TH "+strings.ToUpper(name)+" 1 ") || !strings.Contains(page, ".SH NAME\n"+strings.ReplaceAll(name, "-", `\-`)+` \- `) {
			t.Errorf("%s: bad header:\n%.300s", name, page)
		}
		if strings.Contains(page, "true|false") {
			t.Errorf("%s: a boolean shows [=true|false]", name)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "idemctl-man.1")); err == nil {
		t.Error("the hidden man command has a page")
	}
	root, _ := os.ReadFile(filepath.Join(dir, "idemctl.1"))
	scan, _ := os.ReadFile(filepath.Join(dir, "idemctl-scan.1"))
	for _, want := range []string{".SH EXIT STATUS", ".B 130", "IDEMCTL_PROFILE", ".SH CONNECTION FLAGS", `\fB\-\-dial\-timeout\fR`, `\fB\-\-max\-keys\fR`} {
		if !strings.Contains(string(root), want) {
			t.Errorf("idemctl.1 lacks %q", want)
		}
	}
	for _, want := range []string{`\fB\-\-limit\fR`, `\fB\-o\fR, \fB\-\-output\fR`, `\fB\-\-preset\fR`, `[$IDEMCTL_PRESET]`, ".SH CONNECTION FLAGS\n\\-\\-url"} {
		if !strings.Contains(string(scan), want) {
			t.Errorf("idemctl-scan.1 lacks %q", want)
		}
	}
	if strings.Contains(string(scan), `\fB\-\-dial\-timeout\fR`) {
		t.Error("idemctl-scan.1 repeats the connection flags in full: they are in idemctl(1)")
	}
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Fatal("groff not found: install groff-base (man pages are checked by rendering them)")
	}
	pages, _ := filepath.Glob(filepath.Join(dir, "*.1"))
	for _, p := range pages {
		out, err := exec.Command(groff, "-man", "-Tutf8", "-ww", "-z", p).CombinedOutput()
		if err != nil || len(out) > 0 {
			t.Errorf("groff %s: %v %s", filepath.Base(p), err, out)
		}
	}
}
