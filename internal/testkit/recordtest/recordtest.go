// Package recordtest writes and reads idempotency records and the audit
// log for tests, as the application and an auditor would: a reservation
// made with the lesson's script, a hash read back, the audit log parsed.
//
// A test kit (ARCHITECTURE.md): imported by tests (and the bench harness)
// only; it may import any product package.
package recordtest

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
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

// AuditPath is a fresh audit log's path, in the test's own folder.
func AuditPath(t testing.TB) string { return filepath.Join(t.TempDir(), "audit.log") }

// AuditLines reads the audit log or fails the test.
func AuditLines(t testing.TB, path string) []audit.Entry {
	t.Helper()
	out, err := audit.ReadEntries(path)
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

// ActedApart checks audit logs written by copies that must never act
// together (reapers sharing a lease): each run's window, from its first
// to its last line, overlaps no window of another log, and no key is
// written twice across them. It returns each log's number of runs and
// the keys written.
func ActedApart(t testing.TB, paths ...string) (runs []int, written map[string]int) {
	t.Helper()
	type window struct{ from, to string }
	wins := make([][]window, len(paths))
	written = map[string]int{}
	for i, path := range paths {
		byRun := map[string]*window{}
		for _, e := range AuditLines(t, path) {
			w := byRun[e.Run]
			if w == nil {
				w = &window{e.Time, e.Time}
				byRun[e.Run] = w
			}
			w.from, w.to = min(w.from, e.Time), max(w.to, e.Time)
			if e.Phase == audit.PhaseOutcome && e.Outcome == write.Applied {
				written[e.Key]++
			}
		}
		for _, w := range byRun {
			wins[i] = append(wins[i], *w)
		}
		runs = append(runs, len(byRun))
	}
	for i := range wins {
		for j := i + 1; j < len(wins); j++ {
			for _, x := range wins[i] {
				for _, y := range wins[j] {
					if x.from <= y.to && y.from <= x.to {
						t.Errorf("%s and %s acted at once: %v and %v", paths[i], paths[j], x, y)
					}
				}
			}
		}
	}
	for k, n := range written {
		if n > 1 {
			t.Errorf("%s written %d times", k, n)
		}
	}
	return runs, written
}
