package redistest

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestStartTLS(t *testing.T) {
	s, ca := StartTLS(t)
	ctx := t.Context()
	c, err := TLSClient(s.Addr, ca)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Set(ctx, "k", "over tls", 0).Err(); err != nil {
		t.Fatalf("TLS client: %v", err)
	}
	cfg, err := c.ConfigGet(ctx, "*port").Result()
	if err != nil || cfg["port"] != "0" || cfg["tls-port"] != strconv.Itoa(s.Port) {
		t.Fatalf("CONFIG GET *port over TLS: %v %v", err, cfg)
	}
	// TLS only: a plaintext client on the same port gets nowhere.
	plain := redis.NewClient(&redis.Options{Addr: s.Addr, DisableIdentity: true, MaxRetries: -1,
		DialTimeout: time.Second, ReadTimeout: time.Second})
	defer plain.Close()
	if err := plain.Ping(ctx).Err(); err == nil {
		t.Fatal("a plaintext PING succeeded against a TLS-only server")
	}
}

func TestRestartOn(t *testing.T) {
	s := Own(t)
	ctx := t.Context()
	c := s.Client(0)
	defer c.Close()
	c.Set(ctx, "k", "v", 0)
	before := c.Info(ctx, "server").Val()
	s.Stop()
	s2 := RestartOn(t, s.Port)
	if s2.Addr != s.Addr {
		t.Fatalf("restarted on %s, want %s", s2.Addr, s.Addr)
	}
	// The same client reconnects to a new, empty server.
	var n int64
	var err error
	for range 20 {
		if n, err = c.Exists(ctx, "k").Result(); err == nil {
			break
		}
	}
	if err != nil || n != 0 {
		t.Fatalf("after restart: exists=%d err=%v", n, err)
	}
	if after := c.Info(ctx, "server").Val(); infoField(after, "run_id") == infoField(before, "run_id") {
		t.Fatal("same run_id after a restart")
	}
}

func infoField(info, name string) string {
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), name+":"); ok {
			return v
		}
	}
	return ""
}
