package inspect_test

import (
	"testing"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/testkit/inspecttest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// Where the schema has no lock keys, the read script runs the SCAN
// itself: every SCAN the server ran came from a read call (one each, the
// probe aside), none from the client, and the records are the client
// path's. A key limit and a sample end the walk as they do by the client.
func TestScriptRunsTheScan(t *testing.T) {
	_, c := redistest.OwnClient(t)
	ctx := t.Context()
	seedRecords(t, c, "atlasmart", 3000, 24)
	ks := inspecttest.Keyspace(t, "atlasmart")
	want, _ := inspecttest.ScanAll(t, c, ks, inspect.Options{ReadPath: inspect.ReadClient})

	c.ConfigResetStat(ctx)
	got, cov := inspecttest.ScanAll(t, c, ks, inspect.Options{Count: 500, ReadPath: inspect.ReadScript})
	if cov.ReadPath != "script" || !cov.Complete || cov.Keys != 3000 {
		t.Fatalf("read path %q, coverage %+v", cov.ReadPath, cov)
	}
	sameRecords(t, "client path and the script's own SCAN", want, got)
	scans, _ := commandStats(t, c, "scan")
	calls, _ := evalshaStats(t, c)
	if scans == 0 || scans != calls-1 {
		t.Errorf("%d SCANs for %d read calls (one the probe): the client sent SCANs of its own", scans, calls)
	}

	got, cov = inspecttest.ScanAll(t, c, ks, inspect.Options{MaxKeys: 1000, ReadPath: inspect.ReadScript})
	if !cov.Limited || cov.Keys != 1000 || len(got) != 1000 {
		t.Errorf("--max-keys 1000: %d records, coverage %+v", len(got), cov)
	}
	got, cov = inspecttest.ScanAll(t, c, ks, inspect.Options{Sample: 0.25, ReadPath: inspect.ReadScript})
	if !cov.Sampled || cov.Share < 0.25 || len(got) < 500 || len(got) > 1500 {
		t.Errorf("--sample 25%%: %d records, coverage %+v", len(got), cov)
	}
}
