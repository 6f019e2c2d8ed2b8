// Package redistest starts real redis-server processes on free loopback
// ports for tests. No mocks: tests talk to the same server operators run.
//
// A test kit (ARCHITECTURE.md): imported by tests (and the bench harness)
// only; it may import any product package.
package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// InstallHint tells how to get redis-server when it is missing.
const InstallHint = "redis-server not found in PATH: the tests need a real Redis; install it with `apt-get install -y redis-server` (Debian/Ubuntu) or run `bash .ci/test`"

// Server is one redis-server process.
type Server struct {
	Addr string
	Port int
	Dir  string
	cmd  *exec.Cmd
	once sync.Once
}

// Start launches redis-server with no persistence on a free loopback port;
// extra arguments are appended to its command line (e.g. "--maxmemory", "1mb").
func Start(extra ...string) (*Server, error) {
	bin, err := serverBinary()
	if err != nil {
		return nil, err
	}
	return startWith(bin, func(port int, dir string) []string { return plainArgs(port, dir, extra) })
}

// plainArgs is the command line of a plain server on a loopback port,
// keeping nothing on disk, with extra appended.
func plainArgs(port int, dir string, extra []string) []string {
	return append([]string{
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir,
		"--logfile", filepath.Join(dir, "redis.log"), "--daemonize", "no",
	}, extra...)
}

// startWith starts redis-server with the arguments args builds for a free
// port and a fresh directory, retrying when the port was taken meanwhile.
func startWith(bin binary, args func(port int, dir string) []string) (*Server, error) {
	var last error
	for range 5 { // a free port can be taken between probe and bind
		s, err := start(bin, args)
		if err == nil {
			return s, nil
		}
		last = err
	}
	return nil, last
}

func start(bin binary, argsFor func(port int, dir string) []string) (*Server, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	return launch(bin, port, func(dir string) []string { return argsFor(port, dir) }, plainReady, 10*time.Second)
}

func (s *Server) waitReady(limit time.Duration) error {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, DisableIdentity: true, MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(limit)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// FreePort asks the kernel for an unused loopback port.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// URL is the server's redis:// URL for database db.
func (s *Server) URL(db int) string { return fmt.Sprintf("redis://%s/%d", s.Addr, db) }

// Client returns a client for database db.
func (s *Server) Client(db int) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: s.Addr, DB: db, DisableIdentity: true})
}

// Stop kills the server and removes its directory.
func (s *Server) Stop() {
	s.once.Do(func() {
		if s.cmd != nil && s.cmd.Process != nil {
			_ = s.cmd.Process.Kill()
			_ = s.cmd.Wait()
		}
		os.RemoveAll(s.Dir)
	})
}

// Pid is the server's process id.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

var shared *Server

// RunMain runs a package's tests against one shared server; call it from
// TestMain: os.Exit(redistest.RunMain(m)). A missing redis-server fails the
// run with the install hint, never skips.
func RunMain(m *testing.M) int {
	s, err := Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		return 1
	}
	fmt.Fprintln(os.Stderr, "redistest: running", Describe())
	shared = s
	defer s.Stop()
	return m.Run()
}

// Shared returns the package's server after flushing it, so each test
// starts from an empty keyspace.
func Shared(t testing.TB) *Server {
	t.Helper()
	if shared == nil {
		t.Fatal("redistest.Shared: TestMain must call redistest.RunMain")
	}
	c := shared.Client(0)
	defer c.Close()
	if err := c.FlushAll(context.Background()).Err(); err != nil {
		t.Fatalf("FLUSHALL: %v", err)
	}
	return shared
}

// SharedClient is Shared with a client on database 0, closed when the
// test ends: most tests seed and read behind the tool's back.
func SharedClient(t testing.TB) (*Server, *redis.Client) {
	t.Helper()
	srv := Shared(t)
	c := srv.Client(0)
	t.Cleanup(func() { c.Close() })
	return srv, c
}

// Own starts a private server for one test (for tests that stop, pause or
// reconfigure it) and stops it when the test ends.
func Own(t testing.TB, extra ...string) *Server {
	t.Helper()
	s, err := Start(extra...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// OwnClient is Own with a client on database 0, closed when the test ends.
func OwnClient(t testing.TB, extra ...string) (*Server, *redis.Client) {
	t.Helper()
	s := Own(t, extra...)
	c := s.Client(0)
	t.Cleanup(func() { c.Close() })
	return s, c
}
