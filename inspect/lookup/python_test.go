package lookup_test

import (
	"encoding/json"
	"testing"

	"github.com/idemctl/idemctl/inspect/lookup"
)

// Powertools Python cannot be installed here (its registry is out of
// reach). These vectors were worked out from its source
// (persistence/base.py: the event searched with the compiled JMESPath and
// PowertoolsFunctions, then hashlib over json.dumps(data, sort_keys=True),
// hexdigest; validation searched without the custom functions) by Python's
// own json, hashlib and jmespath 1.1.0, with powertools_json as
// json.loads.
func TestPowertoolsPythonVectors(t *testing.T) {
	ks := keyspace(t, "powertools", "")
	vectors := `[
["{\"headers\":{\"idempotency-key\":\"req-1\"},\"body\":\"{\\\"sku\\\":\\\"sku-42\\\",\\\"qty\\\":1}\"}", "headers.\"idempotency-key\"", "md5", "body", "fn.app.handler#9cc4fc75abfcaa7fa9a543c521176c31", "7bef12b9b78061395dcc24e8629fdd73"],
["{\"body\":{\"B\":1,\"a\":[3,{\"2\":3,\"10\":2,\"z\":1,\"Y\":null}],\"c\":\"\u00e9\\u2028\\n\\\"x\",\"m\":2.0,\"n\":1e-7,\"big\":12345678901234567890}}", "", "md5", "", "fn.app.handler#b0e7206b98c229fd782a7018104efe25", ""],
["{\"body\":{\"B\":1,\"a\":[3,{\"2\":3,\"10\":2,\"z\":1,\"Y\":null}],\"c\":\"\u00e9\\u2028\\n\\\"x\",\"m\":2.0,\"n\":1e-7,\"big\":12345678901234567890}}", "body", "sha256", "body.a", "fn.app.handler#f19194575a7c3ae9f2aaef23d8a3dc92d88a82fc0a1c72d11be93ebe9ea6a26c", "8f4b36a6d6027bcee1b51cd0d2d1aae8e6271ea5b29294c755ddff193a619dc8"],
["{\"httpMethod\":\"POST\",\"body\":\"{\\\"user\\\":\\\"u1\\\",\\\"product_id\\\":7,\\\"amount\\\":10.0}\"}", "powertools_json(body).[user, product_id, amount]", "md5", "", "fn.app.handler#720773e453ee260bb365311166c802d2", ""]
]`
	var rows [][6]string
	if err := json.Unmarshal([]byte(vectors), &rows); err != nil {
		t.Fatal(err)
	}
	for _, v := range rows {
		in := lookup.Inputs{Event: event(t, v[0]), Function: "fn.app.handler", Settings: lookup.Settings{
			EventKeyJMESPath: v[1], HashFunction: v[2], ValidationJMESPath: v[3], Runtime: "python", From: "flag"}}
		d, err := lookup.Derive(ks, in)
		if err != nil {
			t.Fatal(err)
		}
		if d.Library != lookup.LibPowertoolsPython || d.Key != v[4] {
			t.Errorf("%s on %s: key %q, want %q (hashed %s)", v[1], v[0], d.Key, v[4], d.KeyHash.Canonical)
		}
		got := ""
		if d.Fingerprint != nil {
			got = d.Fingerprint.Value
		}
		if got != v[5] {
			t.Errorf("%s on %s: validation %q, want %q", v[3], v[0], got, v[5])
		}
	}
}
