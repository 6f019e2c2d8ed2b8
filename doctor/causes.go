package doctor

// Library-specific causes, by schema (preset) name: why a record ends up
// without a TTL, and what to change in the application. A custom schema
// gets the generic wording.

// processingNoTTLCause: why a processing record has no TTL.
var processingNoTTLCause = map[string]string{
	"atlasmart":           "the RESERVE step stored the record without its EXPIRE (run outside the lesson's Lua script, or a PERSIST/rewrite removed the TTL)",
	"setnx":               "the marker was written with SET key processing NX without EX/PX (the SETNX-forever anti-pattern): a crash after it blocks the key forever",
	"powertools":          "Powertools always writes SET … NX EX: a record without TTL was written or rewritten outside the library (a migration, a PERSIST)",
	"node-idempotency":    "@node-idempotency writes SET … NX PX: a record without TTL was written or rewritten outside the library",
	"express-idempotency": "the Redis adapter writes SET … EX: a record without TTL was written or rewritten outside the library",
	"fastapi-idempotency": "fastapi-idempotency sets PEXPIRE on reserve: the record was written without it (or PERSISTed)",
	"gopotency":           "gopotency writes SET … EX: a record without TTL was written or rewritten outside the library",
	"marker-lock":         "the lock was taken without a TTL (idempotent-request without a lock TTL configured; laravel-idempotency's bare SETNX lock): a crash leaves it forever",
}

// processingNoTTLFix: the application change.
var processingNoTTLFix = map[string]string{
	"atlasmart":   "reserve with the lesson's script (HSET … then EXPIRE key <reserve_ttl> in the same EVAL)",
	"setnx":       "SET key processing NX EX <reserve_ttl>",
	"marker-lock": "configure the lock's TTL (e.g. idempotent-request's lock expiry) so a crashed worker's lock ends",
}

// noTTLCause: why a completed record has no TTL.
var noTTLCause = map[string]string{
	"atlasmart": "the COMPLETE step did not re-set EXPIRE to the retention",
	"setnx":     "the marker (or the response that replaced it) was SET without EX: a plain SET also drops the reserve's TTL",
}

func causeFor(m map[string]string, schema, generic string) string {
	if c, ok := m[schema]; ok {
		return c
	}
	return generic
}
