package cli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/idemctl/idemctl/cli"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// The reproduction: records reserved with a 6 h TTL, judged under
// the preset's 1 m reserve TTL. Their ages cannot be derived, so check must
// not say OK: it names the records, the cause and the reserve TTL to set.
func TestCheckCannotJudgeTTLAboveReserve(t *testing.T) {
	url := clitest.SeededURL(t, 2000, "--reserve-ttl", "6h", "--processing-timeout", "10m")
	base := []string{"check", "--url", url, "--preset", "atlasmart"}

	r := clitest.Run(t, nil, append(base, "--max-stale", "0", "--max-oldest-processing", "5m")...)
	verdict(t, r, cli.ExitUnjudged, "CANNOT JUDGE: cannot judge ")
	for _, want := range []string{"processing records in atlasmart: their TTL (up to 5h", "above the configured reserve TTL (1m)",
		"reserve_ttl: 6h", "--reserve-ttl 6h", "stale 0 <= 0"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("verdict lacks %q: %s", want, r.Stdout)
		}
	}

	// JSON: the gaps with cause and fix; the counts add up to what seed wrote.
	r = clitest.Run(t, nil, append(base, "--max-stale", "0", "--max-processing-no-ttl", "0", "-o", "json")...)
	r.MustCode(t, cli.ExitThreshold) // the 40 processing records without TTL cross for certain
	var out struct {
		Verdict, Message string
		CannotJudge      []struct {
			Cause   string
			Records int64
		} `json:"cannot_judge"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatal(err)
	}
	if out.Verdict != "fail" || len(out.CannotJudge) != 1 || out.CannotJudge[0].Cause != "ttl_above_reserve" || out.CannotJudge[0].Records != 360 {
		t.Fatalf("verdict %s, gaps %+v", out.Verdict, out.CannotJudge)
	}
	if !strings.Contains(out.Message, "also CANNOT JUDGE") {
		t.Errorf("a FAIL should still say what it could not judge: %s", out.Message)
	}

	// A threshold that needs no age is judged as before.
	verdict(t, clitest.Run(t, nil, append(base, "--max-memory", "1GiB")...), cli.ExitOK, "OK: memory ")

	// stats says the same, first in the table and as cannot_judge in JSON.
	r = clitest.Run(t, nil, "stats", "--url", url, "--preset", "atlasmart", "-o", "table")
	r.MustCode(t, cli.ExitOK)
	if !strings.HasPrefix(r.Stdout, "CANNOT JUDGE\n  cannot judge 360 processing records in atlasmart: their TTL") || !strings.Contains(r.Stdout, "reserve_ttl: 6h") {
		t.Errorf("stats table:\n%s", r.Stdout)
	}
	r = clitest.Run(t, nil, "stats", "--url", url, "--preset", "atlasmart", "-o", "json")
	var rep struct {
		CannotJudge []struct{ Cause string } `json:"cannot_judge"`
		Keyspaces   []struct {
			AgeUnknown map[string]int64 `json:"age_unknown"`
		} `json:"keyspaces"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil || len(rep.CannotJudge) != 2 || rep.CannotJudge[0].Cause != "ttl_above_reserve" ||
		rep.Keyspaces[0].AgeUnknown["ttl_above_reserve"] != 360 || rep.Keyspaces[0].AgeUnknown["no_ttl"] != 40 {
		t.Errorf("stats json: %v %+v", err, rep)
	}

	// With the reserve TTL the application really sets, every age is known.
	r = clitest.Run(t, nil, append(base, "--reserve-ttl", "6h", "--processing-timeout", "10m", "--max-stale", "1000", "--max-processing-no-ttl", "40")...)
	verdict(t, r, cli.ExitOK, "OK: stale 160 <= 1,000")
}

// A pattern that matches nothing while the database holds other keys, and a
// keyspace whose records mostly do not decode, cannot back an all-clear;
// an empty database can.
func TestCheckCannotJudgeEmptyPatternAndUndecoded(t *testing.T) {
	srv := redistest.Shared(t)
	url := srv.URL(0)
	base := []string{"check", "--url", url, "--preset", "atlasmart", "--max-stale", "0"}
	verdict(t, clitest.Run(t, nil, base...), cli.ExitOK, "OK: stale 0 <= 0 — 0 records")
	if r := clitest.Run(t, nil, append(base, "-o", "json")...); !strings.Contains(r.Stdout, `"cannot_judge": []`) {
		t.Errorf("an empty list, never null: %s", r.Stdout)
	}

	c := srv.Client(0)
	defer c.Close()
	ctx := t.Context()
	for _, k := range []string{"orders:idem:a", "orders:idem:b", "orders:idem:c"} {
		c.Set(ctx, k, `{"status":"IN_PROGRESS"}`, 0)
	}
	r := clitest.Run(t, nil, base...)
	verdict(t, r, cli.ExitUnjudged, "CANNOT JUDGE: cannot judge keyspace atlasmart: its pattern \"atlasmart:ch23:idem:*\" matched no key, while the database holds 3 keys")
	if !strings.Contains(r.Stdout, "idemctl detect") {
		t.Errorf("no fix: %s", r.Stdout)
	}
	// The same keys under a pattern that matches them, read with the wrong schema.
	r = clitest.Run(t, nil, append(base, "--match", "orders:idem:*")...)
	verdict(t, r, cli.ExitUnjudged, "CANNOT JUDGE: cannot judge keyspace atlasmart: 3 of 3 records (100%) do not decode as atlasmart")
	// The right schema judges them.
	r = clitest.Run(t, nil, "check", "--url", url, "--preset", "node-idempotency", "--match", "orders:idem:*", "--max-unknown-state", "0")
	verdict(t, r, cli.ExitOK, "OK: unknown_state 0 <= 0")
}
