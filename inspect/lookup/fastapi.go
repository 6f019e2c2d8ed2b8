package lookup

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"net/url"
	"strings"

	"github.com/idemctl/idemctl/inspect"
)

// LibFastAPI is fastapi-idempotency (ronango).
const LibFastAPI = "fastapi-idempotency"

// deriveFastAPI keys a record by the schema's template (idem:<key>) and
// fingerprints the request as fastapi-idempotency does: SHA-256, or
// HMAC-SHA256 under the app's secret, over four parts each preceded by its
// length (4 bytes, big-endian): the method, the path as ASGI hands it
// (percent-decoded), the raw query string and the body's bytes.
func deriveFastAPI(ks *inspect.Keyspace, in Inputs) (*Derivation, error) {
	d := &Derivation{Library: LibFastAPI}
	if err := templateKey(d, ks, in); err != nil {
		return nil, err
	}
	r := in.Request
	if r == nil {
		d.note("no request given: the fingerprint is not derived")
		return d, nil
	}
	rawPath, query, _ := strings.Cut(r.Path, "?")
	path, err := url.PathUnescape(rawPath)
	if err != nil {
		path = rawPath
	}
	parts := [][]byte{[]byte(r.Method), []byte(path), []byte(query), r.Body}
	var canon []byte
	for _, p := range parts {
		canon = binary.BigEndian.AppendUint32(canon, uint32(len(p)))
		canon = append(canon, p...)
	}
	d.use("method", r.Method, "request")
	d.use("path", path, "request")
	d.use("query", query, "request")
	d.use("body", string(r.Body), "request")
	algo := "sha256"
	var sum []byte
	if in.Settings.HMACSecret != nil {
		algo = "hmac-sha256"
		m := hmac.New(sha256.New, in.Settings.HMACSecret)
		m.Write(canon)
		sum = m.Sum(nil)
	} else {
		s := sha256.Sum256(canon)
		sum = s[:]
		d.note("derived without a secret (secret=None): an app that passes secret= fingerprints with HMAC-SHA256; set hmac_secret_env (or --hmac-secret-env) to the variable holding it")
	}
	d.Fingerprint = &Hash{Algorithm: algo, Encoding: "hex", Canonical: string(canon), Value: hex.EncodeToString(sum)}
	return d, nil
}
