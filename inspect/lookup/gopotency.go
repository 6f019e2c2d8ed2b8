package lookup

import (
	"github.com/idemctl/idemctl/inspect"
)

// LibGopotency is fco-gt/gopotency (Go).
const LibGopotency = "gopotency"

// deriveGopotency keys a record as gopotency's default key strategy does,
// by the Idempotency-Key header's value itself (or the keyspace's template
// when it names one), and fingerprints it as its default request hasher:
// sha256 hex of the body's bytes exactly as received, nothing for an
// empty body. (Its optional full hasher, over "METHOD:path:body", is not
// derived.)
func deriveGopotency(ks *inspect.Keyspace, in Inputs) (*Derivation, error) {
	d := &Derivation{Library: LibGopotency}
	if !ks.Template.Empty() {
		if err := templateKey(d, ks, in); err != nil {
			return nil, err
		}
	} else {
		key, from := in.Key, "flag"
		if key == "" && in.Request != nil {
			key, from = in.Request.Header("idempotency-key"), "request"
		}
		if key == "" {
			return nil, need("keyspace %s (gopotency) keys records by the Idempotency-Key itself: give --key (or --request with an Idempotency-Key header)", ks.Name)
		}
		d.use("idem_key", key, from)
		d.Key = key
	}
	switch {
	case in.Request == nil:
		d.note("no request given: the fingerprint is not derived")
	case len(in.Request.Body) == 0:
		d.note("the request has no body: gopotency stores an empty RequestHash")
	default:
		d.use("body", string(in.Request.Body), "request")
		d.note("gopotency hashes the body's bytes as received: the file must hold them exactly (spaces and order included)")
		var err error
		if d.Fingerprint, err = digest("sha256", "hex", string(in.Request.Body)); err != nil {
			return nil, err
		}
	}
	return d, nil
}
