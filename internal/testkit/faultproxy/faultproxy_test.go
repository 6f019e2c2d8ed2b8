package faultproxy

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

func TestMain(m *testing.M) { os.Exit(redistest.RunMain(m)) }

// Dial failures after Close are expected: keep go-redis quiet.
func init() { redis.SetLogger(quiet{}) }

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// client talks to addr with a short timeout and no retries, so a lost
// reply is a timeout, never a silent resend.
func client(addr string) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true, MaxRetries: -1,
		ReadTimeout: 300 * time.Millisecond, WriteTimeout: 300 * time.Millisecond, DialTimeout: time.Second,
		PoolSize: 2, DialerRetries: 1, MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}})
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func TestProxyModes(t *testing.T) {
	srv := redistest.Shared(t)
	direct := srv.Client(0)
	defer direct.Close()
	p, err := Start(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx := t.Context()

	c := client(p.Addr())
	defer c.Close()
	if err := c.Set(ctx, "k", "forwarded", 0).Err(); err != nil {
		t.Fatalf("forward: %v", err)
	}
	if v := direct.Get(ctx, "k").Val(); v != "forwarded" {
		t.Fatalf("through the proxy: %q", v)
	}

	// setTimesOut sets k through the proxy, which must time out, then reads
	// k directly: the server holds want.
	setTimesOut := func(what, value, want string) {
		t.Helper()
		if err := c.Set(ctx, "k", value, 0).Err(); !isTimeout(err) {
			t.Fatalf("%s: want a timeout, got %v", what, err)
		}
		if v := direct.Get(ctx, "k").Val(); v != want {
			t.Fatalf("%s: the server holds %q, want %q", what, v, want)
		}
	}

	// Replies dropped: the command runs on the server, the client times out.
	p.DropReplies()
	setTimesOut("drop replies", "ran-unseen", "ran-unseen")
	if req, rep := p.Dropped(); req != 0 || rep == 0 {
		t.Fatalf("dropped %d request / %d reply bytes", req, rep)
	}

	// Requests dropped: nothing reaches the server.
	p.DropRequests()
	setTimesOut("drop requests", "never-sent", "ran-unseen")
	wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	if err := p.WaitDropped(wctx, true, 1); err != nil {
		t.Fatalf("WaitDropped: %v", err)
	}
	cancel()

	// Blackhole: neither direction; the connection stays open.
	p.Blackhole()
	if err := c.Ping(ctx).Err(); !isTimeout(err) {
		t.Fatalf("blackhole: want a timeout, got %v", err)
	}

	// Resume: a fresh connection works (the timed-out ones were discarded).
	p.Resume()
	if err := c.Set(ctx, "k", "resumed", 0).Err(); err != nil {
		t.Fatalf("resume: %v", err)
	}
	if v := direct.Get(ctx, "k").Val(); v != "resumed" {
		t.Fatalf("resume: %q", v)
	}
}

func TestProxyCutAndClose(t *testing.T) {
	srv := redistest.Shared(t)
	p, err := Start(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	c := client(p.Addr())
	defer c.Close()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	// A blocked command on a cut connection fails at once, not at its timeout.
	errc := make(chan error, 1)
	go func() { errc <- c.BLPop(ctx, 5*time.Second, "nothing").Err() }()
	direct := srv.Client(0)
	defer direct.Close()
	for deadline := time.Now().Add(3 * time.Second); ; { // wait until the server holds the BLPOP
		list, _ := direct.ClientList(ctx).Result()
		if strings.Contains(list, "cmd=blpop") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("BLPOP never reached the server: %s", list)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n := p.CutConnections(); n == 0 {
		t.Fatal("CutConnections cut nothing")
	}
	select {
	case err := <-errc:
		if err == nil || err == redis.Nil {
			t.Fatalf("BLPOP on a cut connection: %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("BLPOP did not fail after the cut")
	}
	// Still listening: a new connection works.
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("after cut: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(ctx).Err(); err == nil {
		t.Fatal("after Close: PING succeeded")
	}
	if _, err := net.DialTimeout("tcp", p.Addr(), time.Second); err == nil {
		t.Fatal("after Close: the port still accepts")
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}
