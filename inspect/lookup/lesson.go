package lookup

import (
	"fmt"

	"github.com/idemctl/idemctl/inspect"
)

// deriveLesson keys a record by the schema's template and fingerprints the
// request's body as the lesson does: sha256 hex of
// json.dumps(body, sort_keys=True, separators=(",", ":")).
func deriveLesson(ks *inspect.Keyspace, in Inputs) (*Derivation, error) {
	d := &Derivation{Library: LibLesson}
	if err := templateKey(d, ks, in); err != nil {
		return nil, err
	}
	if in.Request == nil || in.Request.Body == nil {
		d.note("no request body given: the fingerprint is not derived")
		return d, nil
	}
	body, err := ParseJSON(in.Request.Body)
	if err != nil {
		return nil, need("keyspace %s (%s) fingerprints the JSON body: the request's body is not JSON: %v", ks.Name, LibLesson, err)
	}
	d.use("body", string(in.Request.Body), "request")
	d.Fingerprint, err = digest("sha256", "hex", pyCanonical(body))
	if err != nil {
		return nil, fmt.Errorf("lesson fingerprint: %w", err)
	}
	return d, nil
}
