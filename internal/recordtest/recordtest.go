// Package recordtest writes and reads idempotency records and the audit
// log for tests, as the application and an auditor would: a reservation
// made with the lesson's script, a hash read back, the audit log parsed.
package recordtest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/appsim"
	"github.com/idemctl/idemctl/internal/redistest"
)

// Reserve creates a PROCESSING record the way the application does and
// returns its fingerprint.
func Reserve(t testing.TB, srv *redistest.Server, key, body string) string {
	t.Helper()
	c := srv.Client(0)
	defer c.Close()
	fp := appsim.Fingerprint(body)
	if got, err := appsim.Reserve.Run(context.Background(), c, []string{key}, fp, 60).StringSlice(); err != nil || got[0] != "STARTED" {
		t.Fatalf("RESERVE %s: %v %v", key, got, err)
	}
	return fp
}

// HGetAll reads a hash record as the server holds it.
func HGetAll(t testing.TB, srv *redistest.Server, key string) map[string]string {
	t.Helper()
	c := srv.Client(0)
	defer c.Close()
	return c.HGetAll(context.Background(), key).Val()
}

// AuditLines reads the audit log or fails the test.
func AuditLines(t testing.TB, path string) []actions.AuditEntry {
	t.Helper()
	out, err := actions.ReadAuditLog(path)
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	return out
}

// NDJSON parses scan output, failing on a malformed line.
func NDJSON(t testing.TB, stdout string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
		if l == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("malformed NDJSON line %q: %v", l, err)
		}
		out = append(out, rec)
	}
	return out
}

// NDJSONByKey is NDJSON indexed by each record's key.
func NDJSONByKey(t testing.TB, stdout string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, rec := range NDJSON(t, stdout) {
		key, _ := rec["key"].(string)
		out[key] = rec
	}
	return out
}
