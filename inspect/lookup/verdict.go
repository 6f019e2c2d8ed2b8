package lookup

import (
	"fmt"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

// Verdicts on a request against the record under its key.
const (
	Same          = "same_request"
	Different     = "different_request"
	NoFingerprint = "no_fingerprint"
	NotGiven      = "request_not_given"
	NotFound      = "not_found"
)

// Verdict says whether the request is the one the record was made for,
// in one line.
type Verdict struct {
	Kind string `json:"kind"`
	Line string `json:"line"`
}

// Judge compares the derivation with the record read under its key (nil:
// none): the same request (the library replays or waits), a different one
// under the same key (the library answers a conflict: no repair on Redis
// helps), or why it cannot tell.
//
// stored is the record's value as read, for a library that compares the
// stored request (express-idempotency); "" when it was not read.
func Judge(ks *inspect.Keyspace, d *Derivation, r *inspect.Record, stored string) Verdict {
	switch {
	case r == nil:
		return Verdict{NotFound, fmt.Sprintf("not found: never stored, or expired (retention %s)", units.FormatMs(ks.Retention.Milliseconds()))}
	case d.Library == LibExpressIdempotency:
		return judgeStored(d, stored)
	case r.Fingerprint == "" && d.Library == LibPowertoolsTS && d.Fingerprint != nil:
		// Its completion drops the validation hash (observed in 2.35.0):
		// validatePayload then compares the request's hash with nothing.
		return Verdict{NoFingerprint, "no fingerprint stored: cannot tell; with payload validation on, the library answers IdempotencyValidationError to every retry under this key, this request too (the record keeps no validation hash)"}
	case r.Fingerprint == "" && (d.Library == LibPowertoolsTS || d.Library == LibPowertoolsPython) && d.KeyHash != nil:
		return Verdict{NoFingerprint, "no fingerprint stored: cannot tell (the key hashes the selection, so that much is the same; without payload validation Powertools compares nothing else)"}
	case r.Fingerprint == "":
		return Verdict{NoFingerprint, "no fingerprint stored: cannot tell"}
	case d.Fingerprint == nil:
		return Verdict{NotGiven, "the record has a fingerprint, but no request body was given to compare: cannot tell (give --request or --event)"}
	case d.Fingerprint.Value == r.Fingerprint:
		return Verdict{Same, "same request"}
	}
	return Verdict{Different, "different request under this key: the library answers " + conflictAnswer(d.Library, r)}
}

// judgeStored compares the request with the one the record holds, as
// express-idempotency's default intent validator does.
func judgeStored(d *Derivation, stored string) Verdict {
	if d.Request == nil {
		return Verdict{NotGiven, "the record holds the request it was made for, but none was given to compare: cannot tell (give --request)"}
	}
	if stored == "" {
		return Verdict{NoFingerprint, "the stored request was not read (a value past the read cap of 64 KiB): cannot tell"}
	}
	s, err := storedRequest(stored)
	if err != nil {
		return Verdict{NoFingerprint, "no request stored: cannot tell"}
	}
	r := d.Request
	if r.URL == s.URL && r.Method == s.Method && looseEqual(r.Query, s.Query) && looseEqual(r.Body, s.Body) {
		return Verdict{Same, "same request"}
	}
	return Verdict{Different, `different request under this key: the library answers 417 "Misuse of the idempotency key. Please check your request." (its intent validator compares method, url, query and body)`}
}

// conflictAnswer is what the library answers a request whose fingerprint
// differs from the record's, read from its source.
func conflictAnswer(lib string, r *inspect.Record) string {
	switch lib {
	case LibLesson:
		return "CONFLICT (its reserve script refuses another fingerprint under the key)"
	case LibNodeIdempotency:
		if r.State == inspect.StateProcessing {
			return `"A request is outstanding for this Idempotency-Key" (REQUEST_IN_PROGRESS, 409) while the first is in flight, then "Idempotency-Key is already used" (IDEMPOTENCY_FINGERPRINT_MISSMATCH, 422)`
		}
		return `"Idempotency-Key is already used" (IDEMPOTENCY_FINGERPRINT_MISSMATCH, 422)`
	case LibFastAPI:
		if r.State == inspect.StateProcessing {
			return `409 "request with this Idempotency-Key is in progress" while the first is in flight, then 422 "Idempotency-Key reused with a different request body" (or the fingerprint was made with a secret: set hmac_secret_env)`
		}
		return `422 "Idempotency-Key reused with a different request body" (or the fingerprint was made with a secret: set hmac_secret_env)`
	case LibGopotency:
		return `ErrRequestMismatch "idempotency: request with same key has different content"`
	case LibPowertoolsTS, LibPowertoolsPython:
		return `IdempotencyValidationError "Payload does not match stored record for this event key"`
	}
	return "a conflict"
}
