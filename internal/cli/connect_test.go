package cli

import (
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/internal/redistest"
)

// A bare address is read as redis://: what redis-cli -h/-p and compose files
// call a server. URLs with a scheme read as before.
func TestParseURLAcceptsABareAddress(t *testing.T) {
	for raw, want := range map[string]string{
		"127.0.0.1:6391":              "redis://127.0.0.1:6391/0",
		"localhost":                   "redis://localhost:6379/0",
		"[::1]:6379":                  "redis://[::1]:6379/0",
		"::1":                         "redis://[::1]:6379/0",
		"redis:6379":                  "redis://redis:6379/0", // a compose service named redis
		"cache.internal:7000/3":       "redis://cache.internal:7000/3",
		"ops@10.0.0.5:6380":           "redis://ops@10.0.0.5:6380/0",
		"redis://10.0.0.5:6380/2":     "redis://10.0.0.5:6380/2",
		"rediss://ops@cache:6380":     "rediss://ops@cache:6380/0",
		"redis://":                    "redis://127.0.0.1:6379/0",
		"rediss://[2001:db8::1]:6380": "rediss://[2001:db8::1]:6380/0",
	} {
		ep, err := parseURL(raw)
		if err != nil {
			t.Errorf("%q: %v", raw, err)
			continue
		}
		if ep.String() != want {
			t.Errorf("%q read as %s, want %s", raw, ep, want)
		}
	}
	for raw, want := range map[string]string{
		"localhost:abc":     `bad --url: port "abc" is not a number`,
		"127.0.0.1:6379/x":  `bad --url: database "x" is not a number`,
		"http://cache:6379": `bad --url: scheme must be redis:// or rediss://, not "http"`,
	} {
		_, err := parseURL(raw)
		if err == nil || err.Error() != want {
			t.Errorf("%q: error %v, want %s", raw, err, want)
		}
	}
	// A password in a bare address is redacted as in a URL.
	if _, err := parseURL("ops:s3cr/et@cache:6379"); err == nil || strings.Contains(err.Error(), "s3cr") ||
		!strings.Contains(err.Error(), "--password-env") {
		t.Errorf("a malformed bare address with a password: %v", err)
	}
	ep, err := parseURL("127.0.0.1:6391")
	if err != nil || ep.tls {
		t.Errorf("a bare address must be plaintext: %+v %v", ep, err)
	}
}

// The case, end to end: --url host:port scans.
func TestScanWithABareAddress(t *testing.T) {
	srv := redistest.Shared(t)
	runCLI(t, nil, "scan", "--url", srv.Addr, "--preset", "atlasmart", "-o", "json").mustCode(t, exitOK)
}

func connectMsg(t *testing.T, rawURL string, dial time.Duration) (string, time.Duration) {
	t.Helper()
	ep, err := parseURL(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	c, err := newClient(context.Background(), clientOpts{ep: ep, mode: "standalone", dialTimeout: dial,
		readTimeout: dial, tlsInsecure: ep.tls}, io.Discard)
	if err == nil {
		c.Close()
		t.Fatalf("%s: connected", rawURL)
	}
	e, ok := err.(*exitErr)
	if !ok || e.code != exitError {
		t.Fatalf("%s: %T %v, want exit code %d", rawURL, err, err, exitError)
	}
	if strings.Contains(e.msg, "\n") {
		t.Errorf("%s: more than one line: %q", rawURL, e.msg)
	}
	return e.msg, time.Since(start)
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
		msg, _ = connectMsg(t, scheme+"://127.0.0.1:"+itoa(closed), 500*time.Millisecond)
		if !strings.Contains(msg, "connection refused") {
			t.Errorf("%s:// to a closed port: %s", scheme, msg)
		}
	}
}
