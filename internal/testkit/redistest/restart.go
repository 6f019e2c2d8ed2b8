package redistest

import (
	"testing"
	"time"
)

// RestartOn starts a fresh redis-server (empty: there is no persistence) on
// a given loopback port — typically the port of a server the test has just
// stopped, to play a restart under a connected client. It retries while the
// port is still being released and stops the server when the test ends.
func RestartOn(t testing.TB, port int, extra ...string) *Server {
	t.Helper()
	bin, err := serverBinary()
	if err != nil {
		t.Fatal(err)
	}
	args := func(dir string) []string { return plainArgs(port, dir, extra) }
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, err := launch(bin, port, args, plainReady, 5*time.Second)
		if err == nil {
			t.Cleanup(s.Stop)
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("redistest.RestartOn(%d): %v", port, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
