// Package clitest is the one kit the command layer's tests and the
// acceptance suites share: idemctl run in-process with only the I/O a test
// gives it, and the readers of what it printed, wrote and audited.
//
// A test kit (ARCHITECTURE.md): imported by tests (and the bench harness)
// only; it may import any product package.
package clitest

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/idemctl/idemctl/cli"
)

// Result is one run: what it printed and its exit code.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// IO is all a test lets idemctl see: env is the whole environment (HOME a
// fresh empty directory unless env names one), stdin and stdout are not
// terminals. Nothing comes from the real process, so a developer's
// ~/.config/idemctl or IDEMCTL_* variables change no result.
func IO(t testing.TB, env map[string]string, stdin string, stdout, stderr io.Writer) cli.IO {
	home := env["HOME"]
	if home == "" {
		home = t.TempDir()
	}
	return cli.IO{
		Stdin: strings.NewReader(stdin), Stdout: stdout, Stderr: stderr,
		Getenv: func(k string) string {
			if k == "HOME" {
				return home
			}
			return env[k]
		},
		User: func() string { return "idemctl-test" },
	}
}

// Run runs idemctl in-process, as a script would (stdout not a terminal).
func Run(t testing.TB, env map[string]string, args ...string) Result {
	t.Helper()
	return RunStdin(t, "", env, args...)
}

// RunStdin is Run with something on stdin (still not a terminal).
func RunStdin(t testing.TB, stdin string, env map[string]string, args ...string) Result {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Run(context.Background(), IO(t, env, stdin, &out, &errb), args)
	return Result{out.String(), errb.String(), code}
}

// RunWatched is Run with a hook started (in its own goroutine) as soon as
// the command first writes to stdout: "the scan has printed records".
func RunWatched(t testing.TB, env map[string]string, onFirstOutput func(), args ...string) Result {
	t.Helper()
	out := &Buffer{OnFirstWrite: onFirstOutput}
	var errb bytes.Buffer
	code := cli.Run(context.Background(), IO(t, env, "", out, &errb), args)
	return Result{out.String(), errb.String(), code}
}

// MustCode fails the test unless the run exited with want.
func (r Result) MustCode(t testing.TB, want int) {
	t.Helper()
	if r.Code != want {
		t.Fatalf("exit %d, want %d\nstdout: %.2000s\nstderr: %s", r.Code, want, r.Stdout, r.Stderr)
	}
}

// OneLineErr checks an error is a single line without a stack trace or a
// raw control character (a file name or a server's reply may hold one).
func (r Result) OneLineErr(t testing.TB) {
	t.Helper()
	for _, c := range r.Stderr {
		if c < 0x20 && c != '\n' || c == 0x7f || c >= 0x80 && c <= 0x9f || c == utf8.RuneError {
			t.Fatalf("raw control %U on stderr: %q", c, r.Stderr)
		}
	}
	var errLines []string
	for _, l := range strings.Split(strings.TrimSpace(r.Stderr), "\n") {
		if !strings.Contains(l, "warning:") {
			errLines = append(errLines, l)
		}
	}
	if len(errLines) != 1 || strings.Contains(r.Stderr, "goroutine") || strings.Contains(r.Stderr, "panic") {
		t.Fatalf("want one clean line on stderr, got %q", r.Stderr)
	}
}

// Buffer is a bytes.Buffer a running command and the test may share; its
// OnFirstWrite, if set, starts in its own goroutine at the first write.
type Buffer struct {
	OnFirstWrite func()
	mu           sync.Mutex
	b            bytes.Buffer
	once         sync.Once
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.once.Do(func() {
		if s.OnFirstWrite != nil {
			go s.OnFirstWrite()
		}
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Background is idemctl running in a goroutine until its context is
// cancelled, as a long-running command is stopped by SIGINT.
type Background struct {
	cancel         context.CancelFunc
	done           chan int
	Stdout, Stderr *Buffer
}

// Start runs idemctl in the background; the test's cleanup stops it.
func Start(t testing.TB, args ...string) *Background {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b := &Background{cancel: cancel, done: make(chan int, 1), Stdout: &Buffer{}, Stderr: &Buffer{}}
	o := IO(t, nil, "", b.Stdout, b.Stderr)
	go func() { b.done <- cli.Run(ctx, o, args) }()
	t.Cleanup(func() { b.Stop(t) })
	return b
}

// Exited reports the exit code if the command has already ended.
func (b *Background) Exited() (int, bool) {
	select {
	case code := <-b.done:
		b.done <- code // later calls see it too
		return code, true
	default:
		return 0, false
	}
}

// Stop cancels the command and returns its result.
func (b *Background) Stop(t testing.TB) Result {
	t.Helper()
	b.cancel()
	select {
	case code := <-b.done:
		b.done <- code
		return Result{b.Stdout.String(), b.Stderr.String(), code}
	case <-time.After(10 * time.Second):
		t.Fatalf("command did not stop within 10s after cancel; stderr: %s", b.Stderr.String())
	}
	return Result{}
}

// RepoRoot is the module root: the nearest folder above the package go
// test runs in that holds go.mod, whatever its depth.
var RepoRoot = moduleRoot()

func moduleRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return "."
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

// BuildBinary builds idemctl into the test's temporary directory.
func BuildBinary(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "idemctl")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = RepoRoot
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
