// Package lookup derives where a request's idempotency record lives: given
// a keyspace and what the engineer has (the idempotency key and the
// template's captures, an HTTP request as logged, or a Lambda event), it
// computes the record's key, and the fingerprint the library stores for
// that request, exactly as the keyspace's library does, and returns the
// derivation (inputs used, canonical form hashed, hash, key) as a value
// that can be checked by hand. Each derivation is written from reading the
// library's own source, never copied from it.
//
// Floor 1 of ARCHITECTURE.md, the read engine: it may import inspect and
// the foundations (floor 0), never the write path, a screen or the command
// layer.
package lookup
