package lookup_test

import (
	"testing"

	"github.com/idemctl/idemctl/inspect/lookup"
)

// fastapi-idempotency's fingerprint: length-prefixed method, decoded path,
// raw query and body, under SHA-256 or HMAC-SHA256. Vectors by Python's
// hashlib and hmac, following its fingerprint.py.
func TestFastAPIVectors(t *testing.T) {
	ks := keyspace(t, "fastapi-idempotency", "")
	raw := "POST /orders/%C3%A9%20x?a=1&b=%20 HTTP/1.1\r\nIdempotency-Key: f-1\r\n\r\n{\"qty\": 1}"
	for _, c := range []struct {
		secret []byte
		want   string
	}{
		{nil, "638e0c6d48e332cccf1ad82b4b4ce033c3be8539ea55e69eb36907290c99c812"},
		{[]byte("s3cret"), "89738863cc385ac61df1ec024d1585e71c3ed6a6645db85a6b11bf3c81c8dc67"},
	} {
		d, err := lookup.Derive(ks, lookup.Inputs{Request: request(t, raw), Settings: lookup.Settings{HMACSecret: c.secret}})
		if err != nil {
			t.Fatal(err)
		}
		if d.Key != "idem:f-1" || d.Fingerprint == nil || d.Fingerprint.Value != c.want {
			t.Errorf("secret %q: key %q, fingerprint %+v, want %s", c.secret, d.Key, d.Fingerprint, c.want)
		}
	}
}
