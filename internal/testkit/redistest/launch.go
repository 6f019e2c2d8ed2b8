package redistest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func plainReady(s *Server) error { return s.waitReady(200 * time.Millisecond) }

// errExited means redis-server gave up (bad option, port taken, bad
// certificate): its logs say why.
var errExited = errors.New("redis-server exited")

// launch starts redis-server with args(dir) in a fresh directory and polls
// ready until it answers, the server reports a fatal error in its logs, or
// limit passes. Its stdout and stderr go to dir/stderr.log, where Redis
// prints command-line errors before it opens its log file.
func launch(bin binary, port int, args func(dir string) []string, ready func(*Server) error, limit time.Duration) (*Server, error) {
	dir, err := os.MkdirTemp("", "idemctl-redis-")
	if err != nil {
		return nil, err
	}
	out, err := os.Create(filepath.Join(dir, "stderr.log"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	defer out.Close()
	cmd := bin.command(args(dir)...)
	cmd.Stdout, cmd.Stderr = out, out
	setProcAttr(cmd)
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s: %w", bin.Version, err)
	}
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Port: port, Dir: dir, cmd: cmd}
	deadline := time.Now().Add(limit)
	for {
		err := ready(s)
		if err == nil {
			return s, nil
		}
		logs := serverLogs(dir)
		if fatal(logs) {
			err = errExited
		}
		if errors.Is(err, errExited) || time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("%s on %s did not start: %v\n%s", bin.Version, s.Addr, err, logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// serverLogs is what redis-server wrote to stderr and to its log file.
func serverLogs(dir string) string {
	a, _ := os.ReadFile(filepath.Join(dir, "stderr.log"))
	b, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
	return strings.TrimSpace(string(a) + "\n" + string(b))
}

func fatal(logs string) bool {
	for _, m := range []string{"FATAL", "aborting", "Failed listening", "Failed to configure TLS", "Bad directive", "Unrecognized"} {
		if strings.Contains(logs, m) {
			return true
		}
	}
	return false
}
