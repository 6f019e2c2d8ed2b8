package acceptance

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/cli"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/recordtest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// hostileKeys are keys whose printed command could break out of its
// quoting or here-document, re-split its columns, or write to the terminal.
var hostileKeys = []string{
	`quote'd "and" double`,
	"x\nEOF\ntouch pwned-heredoc\ncat <<'EOF'\n",
	"EOF",
	"tab\tin\tkey",
	"$(touch pwned-subst)",
	"`touch pwned-backtick`",
	"osc52\x1b]52;c;cHduZWQ=\x07sgr\x1b[31mred\x1b[0m",
	`literal \x1b[31m backslash`,
	"#looks-like-a-comment",
	" padded ",
	"cr\rlf\n",
	"bidi\u202egnp.exe",
	"bytes\x01\x7f\xff\xfe",
	"'; touch pwned-quote; '",
}

// The printed command is pasted into a real bash with idemctl replaced by a
// recorder: nothing else runs, no control byte reaches the terminal, and
// the recorded arguments and here-document, run for real, write exactly
// the records shown — each hostile key once, every neighbour untouched.
func TestPrintedCommandIsSafeToPaste(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal("bash is required: apt-get install bash")
	}
	srv := redistest.Shared(t)
	env := map[string]string{"XDG_STATE_HOME": t.TempDir()}
	fps := map[string]string{}
	for _, k := range hostileKeys {
		fps[k] = recordtest.Reserve(t, srv, k, "body "+k)
	}
	for _, k := range []string{"pwned-heredoc", "cat <<'EOF'", "tab", "osc52"} {
		recordtest.Reserve(t, srv, k, "neighbour") // what a mangled key could hit instead
	}
	base := []string{"--reason", "it's $(stuck) `really`", "--url", srv.URL(0), "--preset", "atlasmart", "--match", "*", "--write"}
	r := clitest.Run(t, env, append(append([]string{"fail"}, hostileKeys...), base...)...)
	r.MustCode(t, cli.ExitRefused)
	i := strings.Index(r.Stderr, "  idemctl ")
	if i < 0 {
		t.Fatalf("no command printed:\n%s", r.Stderr)
	}
	cmd := r.Stderr[i:]
	cmd = cmd[:strings.Index(cmd, "\nEOF\n")+len("\nEOF\n")]
	for _, c := range []byte(cmd) {
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			t.Fatalf("the printed command holds control byte %#x:\n%q", c, cmd)
		}
	}
	if strings.ContainsAny(r.Stderr, "\x1b\x07") {
		t.Fatalf("stderr holds ESC or BEL: %q", r.Stderr)
	}

	dir := t.TempDir()
	script := "idemctl() { printf '%s\\0' \"$@\" > args; cat > stdin; }\n" + cmd
	sh := exec.Command(bash, "--noprofile", "--norc", "-c", script)
	sh.Dir, sh.Env = dir, []string{"PATH=/usr/bin:/bin"}
	var shErr bytes.Buffer
	sh.Stderr = &shErr
	if err := sh.Run(); err != nil {
		t.Fatalf("bash: %v %s\n%s", err, shErr.String(), cmd)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 || shErr.Len() > 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("pasting ran something else: files %q, stderr %q", names, shErr.String())
	}
	rawArgs, _ := os.ReadFile(filepath.Join(dir, "args"))
	stdin, _ := os.ReadFile(filepath.Join(dir, "stdin"))
	args := strings.Split(strings.TrimSuffix(string(rawArgs), "\x00"), "\x00")
	if !strings.Contains(strings.Join(args, " "), "--reason it's $(stuck) `really`") {
		t.Fatalf("the reason did not survive the shell: %q", args)
	}

	r = clitest.RunStdin(t, string(stdin), env, args...)
	r.MustCode(t, cli.ExitOK)
	if !strings.Contains(r.Stdout, "summary: 14 applied") {
		t.Fatalf("stdout %q\nstderr %q", r.Stdout, r.Stderr)
	}
	for _, k := range hostileKeys {
		if got := recordtest.HGetAll(t, srv, k); got["state"] != "FAILED" || got["fingerprint"] != fps[k] {
			t.Errorf("key %q: %q", k, got)
		}
	}
	for _, k := range []string{"pwned-heredoc", "cat <<'EOF'", "tab", "osc52"} {
		if got := recordtest.HGetAll(t, srv, k)["state"]; got != "PROCESSING" {
			t.Errorf("neighbour %q was written: %s", k, got)
		}
	}
}

// --from-file reads both forms: the readable TAB line and the base64 line
// the printed command uses for keys that are not plain.
func TestFromFileColumns(t *testing.T) {
	for _, k := range append([]string{"plain:key", "a b"}, hostileKeys...) {
		line := actions.TargetLine(k, "PROCESSING", "fp\t1", "0123456789abcdef0123")
		if strings.ContainsAny(line, "\n\r\x1b") {
			t.Fatalf("%q: line %q", k, line)
		}
		cols, err := actions.TargetColumns(line)
		if err != nil || len(cols) != 4 || cols[0] != k || cols[2] != "fp\t1" {
			t.Fatalf("%q → %q → %q %v", k, line, cols, err)
		}
	}
	if cols, _ := actions.TargetColumns("plain:key\tPROCESSING\tabc"); len(cols) != 3 || cols[0] != "plain:key" {
		t.Fatalf("a TAB line: %q", cols)
	}
	if cols, _ := actions.TargetColumns("# a comment"); cols != nil {
		t.Fatalf("a comment: %q", cols)
	}
	if _, err := actions.TargetColumns("#b64\tnot base64!"); err == nil {
		t.Fatal("a bad base64 line was accepted")
	}
}
