package lookup_test

import (
	"testing"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/lookup"
)

// express-idempotency stores the request and compares a retry with it:
// url and method exactly, query and body with deep-equal's loose
// equality (names in any order, 1 equal to "1").
func TestExpressComparesTheStoredRequest(t *testing.T) {
	ks := keyspace(t, "express-idempotency", "")
	stored := `{"request":{"body":{"a":1,"b":[true,"x"]},"headers":{"idempotency-key":"e1"},"method":"POST","query":{"v":"2"},"url":"/orders?v=2"}}`
	rec := &inspect.Record{Key: "e1"}
	cases := []struct{ req, want string }{
		{"POST /orders?v=2 HTTP/1.1\nIdempotency-Key: e1\n\n{\"b\":[true,\"x\"],\"a\":1}", lookup.Same},
		{"POST /orders?v=2 HTTP/1.1\nIdempotency-Key: e1\n\n{\"a\":\"1\",\"b\":[1,\"x\"]}", lookup.Same},
		{"POST /orders?v=2 HTTP/1.1\nIdempotency-Key: e1\n\n{\"a\":2,\"b\":[true,\"x\"]}", lookup.Different},
		{"PUT /orders?v=2 HTTP/1.1\nIdempotency-Key: e1\n\n{\"a\":1,\"b\":[true,\"x\"]}", lookup.Different},
		{"POST /orders?v=3 HTTP/1.1\nIdempotency-Key: e1\n\n{\"a\":1,\"b\":[true,\"x\"]}", lookup.Different},
		{"POST /orders?v=2 HTTP/1.1\nIdempotency-Key: e1\n\n", lookup.Different},
	}
	for _, c := range cases {
		d, err := lookup.Derive(ks, lookup.Inputs{Request: request(t, c.req)})
		if err != nil {
			t.Fatal(err)
		}
		if d.Key != "e1" {
			t.Errorf("key %q", d.Key)
		}
		if v := lookup.Judge(ks, d, rec, stored); v.Kind != c.want {
			t.Errorf("%q: %s, want %s", c.req, v.Line, c.want)
		}
	}
}
