package redisconn

import (
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

func connectMsg(t *testing.T, rawURL string, dial time.Duration) (string, time.Duration) {
	t.Helper()
	ep, err := ParseURL(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	c, err := Dial(t.Context(), Options{Endpoint: ep, Mode: "standalone", DialTimeout: dial,
		ReadTimeout: dial, TLSInsecure: ep.TLS}, io.Discard)
	if err == nil {
		c.Close()
		t.Fatalf("%s: connected", rawURL)
	}
	e, ok := err.(*Error)
	if !ok || e.Kind != KindConnect {
		t.Fatalf("%s: %v, want a connection error", rawURL, err)
	}
	if strings.Contains(e.Msg, "\n") {
		t.Errorf("%s: more than one line: %q", rawURL, e.Msg)
	}
	return e.Msg, time.Since(start)
}

// rediss:// against a plaintext server, and redis:// against a TLS-only
// one, are named as such with the scheme to use, not as a timeout or EOF.
func TestConnectNamesATLSMismatch(t *testing.T) {
	plain := redistest.Shared(t)
	tlsSrv, _ := redistest.StartTLS(t)

	msg, took := connectMsg(t, "rediss://"+plain.Addr, 500*time.Millisecond)
	want := "cannot connect to Redis at " + plain.Addr + ": the server did not answer the TLS handshake: it speaks plain Redis, not TLS — use redis:// instead of rediss://"
	if msg != want {
		t.Errorf("rediss:// to a plaintext server:\n got %s\nwant %s", msg, want)
	}
	if took > 5*time.Second {
		t.Errorf("the diagnosis took %v", took)
	}

	msg, _ = connectMsg(t, "redis://"+tlsSrv.Addr, 2*time.Second)
	want = "cannot connect to Redis at " + tlsSrv.Addr + ": the server closed the connection: it speaks only TLS — use rediss:// instead of redis:// (with --tls-ca to verify it)"
	if msg != want {
		t.Errorf("redis:// to a TLS-only server:\n got %s\nwant %s", msg, want)
	}

	// A port that accepts connections but answers neither TLS nor Redis.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // hold it open, say nothing
		}
	}()
	msg, _ = connectMsg(t, "rediss://"+ln.Addr().String(), 300*time.Millisecond)
	if !strings.Contains(msg, "did not answer the TLS handshake — it may not speak TLS (use redis:// for a plaintext port), or raise --dial-timeout") {
		t.Errorf("rediss:// to a silent port: %s", msg)
	}

	// Nothing listening stays "connection refused", TLS or not.
	closed, _ := redistest.FreePort()
	for _, scheme := range []string{"redis", "rediss"} {
		msg, _ = connectMsg(t, scheme+"://127.0.0.1:"+strconv.Itoa(closed), 500*time.Millisecond)
		if !strings.Contains(msg, "connection refused") {
			t.Errorf("%s:// to a closed port: %s", scheme, msg)
		}
	}
}
