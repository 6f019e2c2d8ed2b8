// Package inspecttest builds keyspaces for tests, as httptest builds
// servers: a preset or a schema document in, a ready keyspace out, the
// test failed on any error; and seeds the records of every encoding they
// read.
//
// A test kit (ARCHITECTURE.md): imported by tests (and the bench harness)
// only; it may import any product package.
package inspecttest

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// Keyspace is the named preset's keyspace with its defaults.
func Keyspace(t testing.TB, preset string) *inspect.Keyspace {
	t.Helper()
	return Spec(t, inspect.KeyspaceSpec{Schema: Preset(t, preset)})
}

// Preset is the named preset's schema, for a spec that sets more.
func Preset(t testing.TB, name string) *inspect.Schema {
	t.Helper()
	s, err := inspect.Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Schema is the keyspace of a schema given as YAML.
func Schema(t testing.TB, name, doc string) *inspect.Keyspace {
	t.Helper()
	s, err := inspect.ParseSchemaYAML(name, []byte(doc))
	if err != nil {
		t.Fatalf("schema %s: %v", name, err)
	}
	return Spec(t, inspect.KeyspaceSpec{Schema: s})
}

// Spec is the keyspace of a full specification.
func Spec(t testing.TB, spec inspect.KeyspaceSpec) *inspect.Keyspace {
	t.Helper()
	ks, err := inspect.NewKeyspace(spec)
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

// Encodings are how many records SeedEncodings writes in each encoding a
// server saves them in.
type Encodings struct {
	Listpack  int // atlasmart hashes under the listpack limit
	Strings   int // setnx strings
	Hashtable int // atlasmart hashes saved as hash tables
	FieldTTL  int // atlasmart hashes with field TTLs, where the server has them
}

// SeedEncodings seeds records of every encoding, each with timing's TTLs,
// timeout, retention and large-response size (random seeds 1 to 4, in
// the order of Encodings), and reports whether the server has field
// TTLs: the FieldTTL records are seeded only then.
func SeedEncodings(t testing.TB, c *redis.Client, timing appsim.Plan, n Encodings) (fieldTTL bool) {
	t.Helper()
	ctx := context.Background()
	fieldTTL, err := redistest.HasFieldTTL(c)
	if err != nil {
		t.Fatal(err)
	}
	seed := func(schema string, count int, randSeed uint64, withFieldTTL bool) {
		p := timing
		p.Schema, p.Count, p.RandSeed, p.FieldTTL = schema, count, randSeed, withFieldTTL
		if _, err := appsim.Seed(ctx, c, p); err != nil {
			t.Fatal(err)
		}
	}
	seed("atlasmart", n.Listpack, 1, false)
	seed("setnx", n.Strings, 2, false)
	// Hashes past the listpack limit are saved as hash tables.
	if err := c.ConfigSet(ctx, "hash-max-listpack-entries", "0").Err(); err != nil {
		t.Fatal(err)
	}
	seed("atlasmart", n.Hashtable, 3, false)
	if err := c.ConfigSet(ctx, "hash-max-listpack-entries", "128").Err(); err != nil {
		t.Fatal(err)
	}
	if fieldTTL {
		seed("atlasmart", n.FieldTTL, 4, true)
	}
	return fieldTTL
}

// ScanAll collects every record of one keyspace.
func ScanAll(t *testing.T, c redis.UniversalClient, ks *inspect.Keyspace, opt inspect.Options) ([]inspect.Record, inspect.Coverage) {
	t.Helper()
	var recs []inspect.Record
	covs, _ := inspect.Scan(t.Context(), c, []*inspect.Keyspace{ks}, opt, func(b inspect.Batch) error {
		recs = append(recs, b.Records...)
		return nil
	})
	return recs, covs[0]
}
