package lookup_test

import (
	"testing"
	"unicode/utf8"

	"github.com/idemctl/idemctl/inspect/lookup"
)

// Any bytes given as a request or an event are parsed or refused with an
// error, never a panic; what parses derives a key in every library's
// keyspace or says what it needs.
func FuzzParseRequest(f *testing.F) {
	f.Add([]byte("POST /orders HTTP/1.1\r\nIdempotency-Key: k\r\nContent-Length: 2\r\n\r\n{}"))
	f.Add([]byte(`{"method":"POST","path":"/orders","headers":{"Idempotency-Key":["a","b"]},"body":{"a":[1,2.5e3,"é"]}}`))
	f.Add([]byte(`{"method":"PUT","url":"https://x/y?z=1","body":"{\"10\":1,\"2\":-0}"}`))
	f.Add([]byte(`{"headers":{"idempotency-key":"k"},"body":"{}"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, rerr := lookup.ParseRequest(data)
		ev, everr := lookup.ParseJSON(data)
		for _, preset := range []string{"atlasmart", "node-idempotency", "powertools", "setnx"} {
			ks := keyspace(t, preset, "")
			in := lookup.Inputs{Key: "k", Captures: map[string]string{"principal": "p"}, Function: "fn"}
			if rerr == nil {
				in.Request = r
			}
			if everr == nil {
				in.Event = &ev
				in.Settings.EventKeyJMESPath = "body"
				in.Settings.ValidationJMESPath = "headers"
			}
			d, err := lookup.Derive(ks, in)
			if err == nil && !utf8.ValidString(d.Key) && utf8.Valid(data) {
				t.Errorf("%s: key %q is not UTF-8", preset, d.Key)
			}
			if preset == "powertools" {
				in.Settings.Runtime = "python"
				_, _ = lookup.Derive(ks, in)
			}
		}
	})
}
