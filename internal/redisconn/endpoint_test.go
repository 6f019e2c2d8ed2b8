package redisconn

import (
	"strings"
	"testing"
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
		ep, err := ParseURL(raw)
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
		_, err := ParseURL(raw)
		if err == nil || err.Error() != want {
			t.Errorf("%q: error %v, want %s", raw, err, want)
		}
	}
	// A password in a bare address is redacted as in a URL.
	if _, err := ParseURL("ops:s3cr/et@cache:6379"); err == nil || strings.Contains(err.Error(), "s3cr") ||
		!strings.Contains(err.Error(), "--password-env") {
		t.Errorf("a malformed bare address with a password: %v", err)
	}
	ep, err := ParseURL("127.0.0.1:6391")
	if err != nil || ep.TLS {
		t.Errorf("a bare address must be plaintext: %+v %v", ep, err)
	}
}
