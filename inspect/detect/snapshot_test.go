package detect_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/idemctl/idemctl/inspect/detect"
	"github.com/idemctl/idemctl/inspect/snapshot"
	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// TestDetectSnapshotAgreesWithLive: detect on a snapshot proposes what it
// proposes on the server that wrote it — the same preset, evidence,
// timing and YAML — for presets with and without locks, and a draft for
// a format no preset knows.
func TestDetectSnapshotAgreesWithLive(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	ctx := t.Context()
	for _, p := range []appsim.Plan{{Schema: "atlasmart", Count: 150, RandSeed: 1}, {Schema: "setnx", Count: 80, RandSeed: 2}} {
		p.ReserveTTL, p.ProcessingTimeout, p.Retention = 6*time.Hour, 10*time.Minute, 24*time.Hour
		if _, err := appsim.Seed(ctx, c, p); err != nil {
			t.Fatal(err)
		}
	}
	now := float64(time.Now().Unix())
	for i := range 12 {
		c.Set(ctx, fmt.Sprintf("idempotency_keys:r-%d", i), fmt.Sprintf(`{"status":%d,"headers":{},"response":"ok"}`, 200+i%2), time.Hour)
		c.Set(ctx, fmt.Sprintf("idempotency_keys:lock:q-%d", i), fmt.Sprint(now-float64(i)), time.Minute)
		c.Set(ctx, fmt.Sprintf("custom:%d", i), fmt.Sprintf(`{"phase":"%s","digest":"%040x","httpCode":201}`, []string{"open", "closed"}[i%2], i), time.Hour)
	}
	src := srv.Snapshot(t)
	for _, pattern := range []string{"atlasmart:*", "idempotency:*", "idempotency_keys:*", "custom:*"} {
		live, err := detect.Detect(ctx, c, pattern, 1000)
		if err != nil {
			t.Fatal(err)
		}
		snap, err := snapshot.Open(snapshot.Spec{Path: src})
		if err != nil {
			t.Fatal(err)
		}
		got, err := detect.DetectSnapshot(ctx, snap, pattern, 1000, nil)
		snap.Close()
		if err != nil {
			t.Fatal(err)
		}
		// The proposed timings come from TTLs read a moment apart (and the
		// snapshot's time is whole seconds): the same settings proposed,
		// not the same figures to the second.
		if len(got.Timing) != len(live.Timing) {
			t.Fatalf("%s: %d timing proposals from the snapshot, %d live", pattern, len(got.Timing), len(live.Timing))
		}
		for i := range got.Timing {
			if (got.Timing[i].Value == "") != (live.Timing[i].Value == "") {
				t.Errorf("%s: %+v from the snapshot, %+v live", pattern, got.Timing[i], live.Timing[i])
			}
		}
		if got.Best != nil {
			got.Timing, live.Timing, got.YAML, live.YAML = nil, nil, "", ""
		}
		a, _ := json.MarshalIndent(got, "", " ")
		b, _ := json.MarshalIndent(live, "", " ")
		if string(a) != string(b) {
			t.Errorf("%s:\n snapshot %s\n live     %s", pattern, a, b)
		}
	}
}
