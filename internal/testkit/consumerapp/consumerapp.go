// Package consumerapp runs the test stream consumer (appsim.Consumer) as a
// process of its own — the test binary started again — so that its crash
// points are real: the process kills itself with SIGKILL there, leaving
// the entry it held pending in the consumer group, as a worker that died
// would.
//
// A test kit (ARCHITECTURE.md): imported by tests only. A test package
// that starts consumers calls MainIfChild first thing in its TestMain.
package consumerapp

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/internal/appsim"
)

// envVar carries a child's Options; only the kit sets it.
const envVar = "IDEMCTL_TESTKIT_CONSUMER"

// Options are one consumer process's settings.
type Options struct {
	Addr   string // Redis
	DSN    string // PostgreSQL, holding the effects table
	Config appsim.ConsumerConfig
}

// MainIfChild runs the consumer and exits when this process is a child
// Start launched; otherwise it returns at once.
func MainIfChild() {
	raw := os.Getenv(envVar)
	if raw == "" {
		return
	}
	var o Options
	if err := json.Unmarshal([]byte(raw), &o); err != nil {
		fmt.Fprintln(os.Stderr, "consumer options:", err)
		os.Exit(2)
	}
	os.Exit(runChild(o))
}

func runChild(o Options) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	rc := redis.NewClient(&redis.Options{Addr: o.Addr})
	defer rc.Close()
	db, err := sql.Open("pgx", o.DSN)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer db.Close()
	o.Config.Crash = func() {
		fmt.Println("crash")
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL) // no cleanup, no ack: a real death
		select {}
	}
	if err := appsim.NewConsumer(rc, db, o.Config).Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// Proc is a running consumer process.
type Proc struct {
	cmd            *exec.Cmd
	done           chan struct{}
	err            error // Wait's, once done is closed
	Stdout, Stderr bytes.Buffer
}

// Start launches a consumer process; it is killed when the test ends.
func Start(t testing.TB, o Options) *Proc {
	t.Helper()
	raw, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	p := &Proc{done: make(chan struct{})}
	p.cmd = exec.Command(os.Args[0], "-test.run=^$")
	p.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), envVar + "=" + string(raw)}
	p.cmd.Stdout, p.cmd.Stderr = &p.Stdout, &p.Stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting the consumer: %v", err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { _ = p.cmd.Process.Kill(); <-p.done })
	return p
}

// Wait waits for the process to end and says whether it died at a crash
// point (killed by SIGKILL); any other failure fails the test.
func (p *Proc) Wait(t testing.TB, limit time.Duration) (crashed bool) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(limit):
		t.Fatalf("consumer %s still running after %s; stderr: %s", p.cmd.Args, limit, p.Stderr.String())
	}
	var ee *exec.ExitError
	switch ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); {
	case ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL:
		return true
	case p.err == nil:
		return false
	case errors.As(p.err, &ee):
		t.Fatalf("consumer exited %d: %s", ee.ExitCode(), p.Stderr.String())
	default:
		t.Fatalf("consumer: %v: %s", p.err, p.Stderr.String())
	}
	return false
}

// Run starts a consumer and waits for it (see Wait).
func Run(t testing.TB, o Options, limit time.Duration) (crashed bool) {
	t.Helper()
	return Start(t, o).Wait(t, limit)
}
