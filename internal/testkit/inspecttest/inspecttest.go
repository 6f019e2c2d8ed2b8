// Package inspecttest builds keyspaces for tests, as httptest builds
// servers: a preset or a schema document in, a ready keyspace out, the
// test failed on any error.
//
// A test kit (ARCHITECTURE.md): imported by tests (and the bench harness)
// only; it may import any product package.
package inspecttest

import (
	"testing"

	"github.com/idemctl/idemctl/inspect"
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
