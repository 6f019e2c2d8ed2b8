package lookup_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/lookup"
)

func keyspace(t *testing.T, preset, template string) *inspect.Keyspace {
	t.Helper()
	s, err := inspect.Preset(preset)
	if err != nil {
		t.Fatal(err)
	}
	ks, err := inspect.NewKeyspace(inspect.KeyspaceSpec{Schema: s, KeyTemplate: template})
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

func request(t *testing.T, text string) *lookup.Request {
	t.Helper()
	r, err := lookup.ParseRequest([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func event(t *testing.T, text string) *lookup.Value {
	t.Helper()
	v, err := lookup.ParseJSON([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return &v
}

// Vectors worked out by the lesson's own Python (json.dumps with
// sort_keys and compact separators, then sha256).
func TestLessonFingerprintVectors(t *testing.T) {
	ks := keyspace(t, "atlasmart", "")
	cases := []struct{ body, canonical, sum string }{
		{`{"sku":"sku-42","qty":1}`, `{"qty":1,"sku":"sku-42"}`, "660872e0029b436934691832564bbc7a539b849910c53becbad79af6d01a0486"},
		{`{"b":1.50,"a":{"10":1,"2":[1.0,1e16,1e-5,123456789012345678901234567890,-0]},"s":"é\u2028\u007f😀","A":null}`,
			`{"A":null,"a":{"10":1,"2":[1.0,1e+16,1e-05,123456789012345678901234567890,0]},"b":1.5,"s":"\u00e9\u2028\u007f\ud83d\ude00"}`,
			"64247b8e1210e8f48b067e3df2216c3cf64b8f1a93dfbc0b4b37b8035b2a425b"},
	}
	for _, c := range cases {
		in := lookup.Inputs{Captures: map[string]string{"principal": "customer-42"},
			Request: &lookup.Request{Method: "POST", Path: "/orders", Body: []byte(c.body),
				Headers: map[string]string{"idempotency-key": "req-2026-0001"}}}
		d, err := lookup.Derive(ks, in)
		if err != nil {
			t.Fatal(err)
		}
		if d.Key != "atlasmart:ch23:idem:customer-42:POST:/orders:req-2026-0001" {
			t.Errorf("key %q", d.Key)
		}
		if d.Fingerprint == nil || d.Fingerprint.Canonical != c.canonical || d.Fingerprint.Value != c.sum {
			t.Errorf("body %s: fingerprint %+v, want %s over %s", c.body, d.Fingerprint, c.sum, c.canonical)
		}
	}
}

// Vectors worked out by @node-idempotency/core 1.0.11 itself
// (getIdempotencyCacheKey, getFingerPrint on the body JSON.parse built).
func TestNodeIdempotencyVectors(t *testing.T) {
	ks := keyspace(t, "node-idempotency", "")
	cases := []struct{ body, fp string }{
		{`{"sku":"sku-42","qty":1}`, "ba9899cb7aa8456fc2888ad9c7cc3e9aab79c1e1ae3af1311ed142b1dd6330d7"},
		{`{"b":1,"a":{"10":1,"2":[1.0,2.50,1e3]},"s":"é\u2028<>&"}`, "9ee6f341faaa0bfeeeeca6c975fd8b9ae1a8b66fc49275d66e2f6c23b021f306"},
		{`[1,{"x":-0}]`, "b5200018114b326b97f3df375c1f11c1db0f49267bc002b19cdcaa863392d2a0"},
	}
	for _, c := range cases {
		r := request(t, "POST /orders?x=1 HTTP/1.1\r\nHost: shop\r\nIdempotency-Key: k-1\r\nContent-Type: application/json\r\n\r\n"+c.body)
		d, err := lookup.Derive(ks, lookup.Inputs{Request: r})
		if err != nil {
			t.Fatal(err)
		}
		if d.Key != "node-idempotency:POST:/orders?x=1:k-1" {
			t.Errorf("key %q", d.Key)
		}
		if d.Fingerprint == nil || d.Fingerprint.Value != c.fp {
			t.Errorf("body %s: fingerprint %+v, want %s", c.body, d.Fingerprint, c.fp)
		}
	}
}

// Vectors worked out by @aws-lambda-powertools/idempotency 2.35.0 itself
// (getHashedIdempotencyKey, getHashedPayload), AWS_LAMBDA_FUNCTION_NAME
// fn-x.
func TestPowertoolsTypeScriptVectors(t *testing.T) {
	ks := keyspace(t, "powertools", "")
	ev1 := `{"headers":{"idempotency-key":"req-1"},"body":"{\"sku\":\"sku-42\",\"qty\":1}"}`
	ev2 := `{"body":{"B":1,"a":[3,{"2":3,"10":2,"z":1,"Y":null}],"c":"é\u2028\n\"x","1.5":1e+21,"n":1e-7,"m":0.1,"big":12345678901234567000}}`
	ev3 := `{"httpMethod":"POST","body":"{\"user\":\"u1\",\"product_id\":7,\"extra\":true}"}`
	cases := []struct{ event, path, hash, validation, key, valHash string }{
		{ev1, `headers."idempotency-key"`, "", "body", "fn-x#nMT8dav8qn+ppUPFIRdsMQ==", "e+8SubeAYTldzCToYp/dcw=="},
		{ev2, "", "md5", "", "fn-x#6wlaoI6tv1QP9wykI2ZjrQ==", ""},
		{ev2, "body", "sha256", "body.a", "fn-x#iYFqkxBIVw8HJX6eluVYSFvmCOVhJY5ntTAtiP3CKYk=", "V6uIoHxNin28X5gVDEyCRYkdYjnGGK45A5pAOhehSC0="},
		{ev3, "powertools_json(body).[user, product_id]", "", "powertools_json(body)", "fn-x#DSThnLVb0RoOY6nOEE5rmg==", "XHTk4h0P2HLc0A1+vaRvnA=="},
	}
	for _, c := range cases {
		in := lookup.Inputs{Event: event(t, c.event), Function: "fn-x", Settings: lookup.Settings{
			EventKeyJMESPath: c.path, HashFunction: c.hash, ValidationJMESPath: c.validation, From: "flag"}}
		d, err := lookup.Derive(ks, in)
		if err != nil {
			t.Fatal(err)
		}
		if d.Key != c.key {
			t.Errorf("%s on %s: key %q, want %q (hashed %s)", c.path, c.event, d.Key, c.key, d.KeyHash.Canonical)
		}
		got := ""
		if d.Fingerprint != nil {
			got = d.Fingerprint.Value
		}
		if got != c.valHash {
			t.Errorf("%s on %s: validation %q, want %q", c.validation, c.event, got, c.valHash)
		}
	}
}

// A schema's own template, with any capture; what is missing is named.
func TestTemplateKeyAndMissingInputs(t *testing.T) {
	ks := keyspace(t, "setnx", "orders:{tenant}:{idem_key}")
	d, err := lookup.Derive(ks, lookup.Inputs{Key: "k1", Captures: map[string]string{"tenant": "acme"}})
	if err != nil || d.Key != "orders:acme:k1" || d.Library != lookup.LibTemplate {
		t.Fatalf("%+v %v", d, err)
	}
	_, err = lookup.Derive(ks, lookup.Inputs{Key: "k1"})
	var ne *lookup.NeedError
	if !errors.As(err, &ne) || ne.Msg != "keyspace setnx keys records by orders:{tenant}:{idem_key}: give --capture tenant=VALUE" {
		t.Fatalf("%v", err)
	}
	_, err = lookup.Derive(ks, lookup.Inputs{Key: "a:b", Captures: map[string]string{"tenant": "acme"}})
	if !errors.As(err, &ne) {
		t.Fatalf("a key holding the delimiter in a one-segment capture: %v", err)
	}
	_, err = lookup.Derive(keyspace(t, "powertools", ""), lookup.Inputs{Key: "k1"})
	if !errors.As(err, &ne) || ne.Msg == "" {
		t.Fatalf("powertools without an event: %v", err)
	}
}

// gopotency: the raw key, and sha256 hex of the body's bytes as received
// (vector by Python's hashlib).
func TestGopotencyVectors(t *testing.T) {
	ks := keyspace(t, "gopotency", "")
	r := request(t, "POST /pay HTTP/1.1\r\nIdempotency-Key: pay-7\r\n\r\n{\"amount\": 100, \"currency\":\"EUR\"}")
	d, err := lookup.Derive(ks, lookup.Inputs{Request: r})
	if err != nil {
		t.Fatal(err)
	}
	if d.Key != "pay-7" || d.Fingerprint == nil || d.Fingerprint.Value != "da2c539f0225b7f6341eaf9409b47fe006e6779a9eade7ae815c09786c6b0297" {
		t.Errorf("%+v %+v", d, d.Fingerprint)
	}
	rec := &inspect.Record{Key: "pay-7", Fingerprint: "0000"}
	if v := lookup.Judge(ks, d, rec, ""); v.Kind != lookup.Different || !strings.Contains(v.Line, "ErrRequestMismatch") {
		t.Errorf("%+v", v)
	}
	if _, err := lookup.Derive(ks, lookup.Inputs{}); err == nil {
		t.Error("no key: want what gopotency needs")
	}
}
