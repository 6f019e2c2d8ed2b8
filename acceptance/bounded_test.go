package acceptance

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idemctl/idemctl/cli"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// Every numeric flag is range-checked before anything runs: one line, exit
// 2, never a runtime trace, an allocation of that size or a broken ticker.
func TestNumericFlagsAreBounded(t *testing.T) {
	for _, args := range [][]string{
		{"fail", "k", "--reason", "x", "--rate", "1000000001"},
		{"fail", "k", "--reason", "x", "--rate", "0"},
		{"scan", "--count", "2147483648"},
		{"scan", "--count", "0"},
		{"stats", "--keys-per-sec", "-1"},
		{"scan", "--in-flight", "100000"},
		{"scan", "--max-nodes", "0"},
		{"scan", "--max-keys", "-5"},
		{"scan", "--limit", "-1"},
		{"scan", "--max-value", "1GiB"},
		{"stats", "--top", "0"},
		{"detect", "--match", "x*", "--sample", "100000000"},
		{"demo", "--crash-rate", "2"},
		{"demo", "--rate", "0"},
		{"seed", "--count", "2147483648"},
		{"reconcile", "k", "--reason", "x", "--status", "42"},
		{"exporter", "--group-cap", "1000000"},
		{"check", "--max-stale", "-1"},
	} {
		r := clitest.Run(t, nil, args...)
		if r.Code != cli.ExitUsage || !strings.Contains(r.Stderr, "out of range") {
			t.Errorf("%q: exit %d, stderr %q", args, r.Code, r.Stderr)
			continue
		}
		r.OneLineErr(t)
	}
	r := clitest.Run(t, map[string]string{"IDEMCTL_MAX_VALUE": "1GiB"}, "scan", "--preset", "atlasmart")
	if r.Code != cli.ExitUsage || !strings.Contains(r.Stderr, "$IDEMCTL_MAX_VALUE (for --max-value) 1.0GiB is out of range: want 1B to 512MiB") {
		t.Errorf("a bad value from the environment is not named as such: %q", r.Stderr)
	}
}

// Files are read only when regular and small: a device, a FIFO or a
// directory is refused at once with a clear line (a FIFO used to block
// deaf to SIGTERM, /dev/zero to eat memory until the runtime crashed), so
// is a 100 MB config; a second YAML document is refused, and a password
// file others can read draws a warning.
func TestFilesAreBoundedAndRegular(t *testing.T) {
	srv := redistest.Shared(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge.yaml")
	f, _ := os.Create(huge)
	f.Truncate(100 << 20) // sparse: no disk used
	f.Close()
	url := "redis://" + srv.Addr
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"scan", "--url", url, "--preset", "atlasmart", "--password-file", "/dev/zero"}, "/dev/zero is a character device, not a regular file"},
		{[]string{"scan", "--url", url, "--preset", "atlasmart", "--password-file", fifo}, "is a FIFO (named pipe), not a regular file"},
		{[]string{"scan", "--url", url, "--preset", "atlasmart", "--password-file", dir}, "is a directory"},
		{[]string{"scan", "--config", "/dev/zero"}, "/dev/zero is a character device"},
		{[]string{"scan", "--config", fifo}, "is a FIFO (named pipe)"},
		{[]string{"scan", "--config", huge}, "is 100MiB, more than the 1.0MiB allowed"},
		{[]string{"scan", "--url", "rediss://" + srv.Addr, "--preset", "atlasmart", "--tls-ca", "/dev/zero"}, "--tls-ca /dev/zero is a character device"},
		{[]string{"scan", "--url", "rediss://" + srv.Addr, "--preset", "atlasmart", "--tls-ca", fifo}, "is a FIFO"},
	}
	for _, tc := range cases {
		done := make(chan clitest.Result, 1)
		go func() { done <- clitest.Run(t, nil, tc.args...) }()
		select {
		case r := <-done:
			if r.Code != cli.ExitUsage || !strings.Contains(r.Stderr, tc.want) {
				t.Errorf("%q: exit %d, stderr %q; want %q", tc.args, r.Code, r.Stderr, tc.want)
				continue
			}
			r.OneLineErr(t)
		case <-time.After(10 * time.Second):
			t.Fatalf("%q: still reading after 10 s", tc.args)
		}
	}

	twoDocs := filepath.Join(dir, "two.yaml")
	os.WriteFile(twoDocs, []byte("keyspaces:\n  - name: a\n    preset: atlasmart\n---\nkeyspaces:\n  - name: b\n    preset: setnx\n"), 0o600)
	r := clitest.Run(t, nil, "scan", "--url", url, "--config", twoDocs)
	if r.Code != cli.ExitUsage || !strings.Contains(r.Stderr, "line 5: a second YAML document") {
		t.Errorf("a second YAML document: exit %d, stderr %q", r.Code, r.Stderr)
	}

	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("\n"), 0o644)
	r = clitest.Run(t, nil, "scan", "--url", url, "--preset", "atlasmart", "--password-file", pw)
	if !strings.Contains(r.Stderr, "warning: "+pw+" holds a password and is readable by others (mode 0644)") {
		t.Errorf("a world-readable password file: stderr %q", r.Stderr)
	}
	os.Chmod(pw, 0o600)
	if r = clitest.Run(t, nil, "scan", "--url", url, "--preset", "atlasmart", "--password-file", pw); strings.Contains(r.Stderr, "warning") {
		t.Errorf("a private password file drew a warning: %q", r.Stderr)
	}
}

// A long fingerprint is present, never "missing": kept truncated to 512
// bytes (its head read on the server when it is over the read cap) and
// flagged long_fingerprint; one too big to cut cheaply is flagged, not
// fetched.
func TestLongFingerprintIsKept(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	ctx := t.Context()
	p := "atlasmart:ch23:idem:c:POST:/fp:"
	long := strings.Repeat("f", 65_537)
	c.HSet(ctx, p+"65537", "state", "PROCESSING", "fingerprint", long)
	c.HSet(ctx, p+"600", "state", "PROCESSING", "fingerprint", strings.Repeat("e", 600))
	c.HSet(ctx, p+"2MB", "state", "PROCESSING", "fingerprint", strings.Repeat("d", 2<<20))
	c.HSet(ctx, p+"none", "state", "PROCESSING")
	r := clitest.Run(t, nil, "scan", "--url", srv.URL(0), "--preset", "atlasmart", "-o", "ndjson")
	r.MustCode(t, 0)
	got := map[string]struct {
		Fingerprint *string
		Flags       []string
	}{}
	for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		var rec struct {
			Key         string
			Fingerprint *string
			Flags       []string
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		got[strings.TrimPrefix(rec.Key, p)] = struct {
			Fingerprint *string
			Flags       []string
		}{rec.Fingerprint, rec.Flags}
	}
	for name, want := range map[string]string{"65537": strings.Repeat("f", 512), "600": strings.Repeat("e", 512), "2MB": ""} {
		g := got[name]
		flags := strings.Join(g.Flags, ",")
		if !strings.Contains(flags, "long_fingerprint") || strings.Contains(flags, "missing_fingerprint") {
			t.Errorf("%s: flags %s", name, flags)
		}
		if want != "" && (g.Fingerprint == nil || *g.Fingerprint != want) {
			t.Errorf("%s: fingerprint %v, want its first 512 bytes", name, g.Fingerprint)
		}
	}
	if flags := strings.Join(got["none"].Flags, ","); !strings.Contains(flags, "missing_fingerprint") || strings.Contains(flags, "long_fingerprint") {
		t.Errorf("no fingerprint: flags %s", flags)
	}
}

// SIGTERM is honoured at any point: a write reading its keys from a stdin
// that never closes ends within the grace period.
func TestSigtermWhileBlocked(t *testing.T) {
	bin := clitest.BuildBinary(t)
	cmd := clitest.Command(t, bin, "fail", "--reason", "x", "--from-file", "-")
	stdin, err := cmd.StdinPipe() // held open: the read never ends by itself
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != cli.ExitInterrupt {
			t.Fatalf("after SIGTERM: %v, want exit %d", err, cli.ExitInterrupt)
		}
	case <-time.After(3*time.Second + 5*time.Second): // the 3 s grace after a signal, and slack
		cmd.Process.Kill()
		t.Fatal("SIGTERM was not honoured: still blocked on stdin")
	}
}
