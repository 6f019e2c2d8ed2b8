package lookup

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"sort"
	"strings"

	"golang.org/x/crypto/blake2s"
)

// Derivation is how a request's record key (and the fingerprint its
// library stores) was computed: enough to redo it by hand.
type Derivation struct {
	Library string  `json:"library"` // a Library constant
	Inputs  []Input `json:"inputs"`  // what was used, in the order used
	// KeyHash is the hash inside the key, for libraries that hash the
	// request into it (Powertools); nil when the key is built from text.
	KeyHash *Hash  `json:"key_hash,omitempty"`
	Key     string `json:"key"`
	// Fingerprint is what the library stores in the record's fingerprint
	// field for this request; nil when it stores none for it (or the
	// request was not given: a bare --key).
	Fingerprint *Hash `json:"fingerprint,omitempty"`
	// Request is what a library that stores the request instead of a
	// fingerprint compares (express-idempotency).
	Request *Compared `json:"request,omitempty"`
	// Notes say what the derivation assumed.
	Notes []string `json:"notes,omitempty"`
}

// Input is one value the derivation used and where it came from.
type Input struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	From  string `json:"from"` // flag, request, event, config, default
}

// Hash is a hash over a canonical form, as a library computes it.
type Hash struct {
	Algorithm string `json:"algorithm"` // md5, sha256, blake2s256, …
	Encoding  string `json:"encoding"`  // hex or base64
	Canonical string `json:"canonical"` // the exact text hashed
	Value     string `json:"value"`
}

func (d *Derivation) use(name, value, from string) {
	d.Inputs = append(d.Inputs, Input{Name: name, Value: value, From: from})
}

// InputNames lists the inputs used, for a one-line "from …".
func (d *Derivation) InputNames() string {
	n := make([]string, 0, len(d.Inputs))
	for _, in := range d.Inputs {
		n = append(n, in.Name)
	}
	return strings.Join(n, ", ")
}

func (d *Derivation) note(format string, args ...any) {
	d.Notes = append(d.Notes, fmt.Sprintf(format, args...))
}

var hashes = map[string]func() hash.Hash{
	"md5": md5.New, "sha1": sha1.New, "sha224": sha256.New224, "sha256": sha256.New,
	"sha384": sha512.New384, "sha512": sha512.New,
	"blake2s256": func() hash.Hash { h, _ := blake2s.New256(nil); return h },
}

// hashNames lists the algorithms known, for messages.
func hashNames() string {
	var n []string
	for k := range hashes {
		n = append(n, k)
	}
	sort.Strings(n)
	return strings.Join(n, ", ")
}

// digest hashes canonical with the named algorithm and encoding.
func digest(algorithm, encoding, canonical string) (*Hash, error) {
	newHash, ok := hashes[strings.ToLower(algorithm)]
	if !ok {
		return nil, fmt.Errorf("hash function %q: idemctl knows %s", algorithm, hashNames())
	}
	h := newHash()
	h.Write([]byte(canonical))
	sum := h.Sum(nil)
	out := &Hash{Algorithm: strings.ToLower(algorithm), Encoding: encoding, Canonical: canonical}
	if encoding == "base64" {
		out.Value = base64.StdEncoding.EncodeToString(sum)
	} else {
		out.Value = hex.EncodeToString(sum)
	}
	return out, nil
}
