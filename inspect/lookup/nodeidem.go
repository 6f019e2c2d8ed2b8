package lookup

import (
	"fmt"

	"github.com/idemctl/idemctl/inspect"
)

// deriveNode keys a record as @node-idempotency/core does,
// "<prefix>:<method>:<path>:<Idempotency-Key>" (the schema's template),
// and fingerprints the body it was handed: blake2s256 hex of
// JSON.stringify(body), the body as express.json parsed it. A request
// with no body (or one the JSON parser does not take: strict, objects and
// arrays only) stores no fingerprint.
func deriveNode(ks *inspect.Keyspace, in Inputs) (*Derivation, error) {
	d := &Derivation{Library: LibNodeIdempotency}
	if err := templateKey(d, ks, in); err != nil {
		return nil, err
	}
	if in.Request == nil {
		d.note("no request given: the fingerprint is not derived")
		return d, nil
	}
	if in.Request.Body == nil {
		d.note("the request has no body: node-idempotency stores no fingerprint")
		return d, nil
	}
	body, err := ParseJSON(in.Request.Body)
	if err != nil {
		return nil, need("keyspace %s (%s) fingerprints the JSON body: the request's body is not JSON: %v", ks.Name, LibNodeIdempotency, err)
	}
	d.use("body", string(in.Request.Body), "request")
	if body.Kind != Object && body.Kind != Array {
		d.note("express.json (strict) takes only an object or an array: no fingerprint")
		return d, nil
	}
	d.Fingerprint, err = digest("blake2s256", "hex", jsStringify(body))
	if err != nil {
		return nil, fmt.Errorf("node-idempotency fingerprint: %w", err)
	}
	return d, nil
}
