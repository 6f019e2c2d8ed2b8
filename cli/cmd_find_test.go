package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idemctl/idemctl/cli"
	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

const findKey = "atlasmart:ch23:idem:customer-42:POST:/orders:req-2026-0001"

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// findJSON runs find -o json and decodes the verdict and the key.
func findJSON(t *testing.T, code int, args ...string) (verdict, key string, out clitest.Result) {
	t.Helper()
	r := clitest.Run(t, nil, append([]string{"find", "-o", "json"}, args...)...)
	r.MustCode(t, code)
	var got struct {
		Derivation struct{ Key string }
		Verdict    struct{ Line string }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &got); err != nil {
		t.Fatalf("find -o json: %v\n%s", err, r.Stdout)
	}
	return got.Verdict.Line, got.Derivation.Key, r
}

// The lesson's record, reserved as its script does, is found from the
// customer's request (JSON or raw HTTP), live and in a snapshot; a body
// changed in one field is a different request; another customer's
// request is not found.
func TestFindLessonRecordFromTheRequest(t *testing.T) {
	srv, c := redistest.OwnClient(t)
	ctx := context.Background()
	// Reserved by the lesson's own script, with the lesson's fingerprint.
	fp := appsim.Fingerprint(`{"qty":1,"sku":"sku-42"}`)
	if v, err := appsim.Reserve.Run(ctx, c, []string{findKey}, fp, 60).Slice(); err != nil || fmt.Sprint(v) != "[STARTED]" {
		t.Fatalf("reserve: %v %v", v, err)
	}
	same := writeFile(t, "req.json", `{"method":"POST","path":"/orders","headers":{"Idempotency-Key":"req-2026-0001"},"body":{"sku":"sku-42","qty":1}}`)
	raw := writeFile(t, "req.http", "POST /orders HTTP/1.1\r\nHost: shop\r\nIdempotency-Key: req-2026-0001\r\nContent-Type: application/json\r\n\r\n{\"sku\": \"sku-42\", \"qty\": 1}")
	changed := writeFile(t, "changed.json", `{"method":"POST","path":"/orders","headers":{"Idempotency-Key":"req-2026-0001"},"body":{"sku":"sku-42","qty":2}}`)
	// A reserve TTL of 10m makes the 60 s record 9 minutes old: stale.
	base := []string{"--url", srv.URL(0), "--preset", "atlasmart", "--reserve-ttl", "10m", "--principal", "customer-42"}
	for _, req := range []string{same, raw} {
		v, key, r := findJSON(t, cli.ExitOK, append(base, "--request", req)...)
		if v != "same request" || key != findKey || !strings.Contains(r.Stdout, `"fail --url`) && !strings.Contains(r.Stdout, "idemctl fail") {
			t.Errorf("%s: verdict %q, key %q\n%s", req, v, key, r.Stdout)
		}
	}
	if v, _, _ := findJSON(t, cli.ExitOK, append(base, "--request", changed)...); !strings.HasPrefix(v, "different request under this key: the library answers CONFLICT") {
		t.Errorf("changed body: %q", v)
	}
	// The script itself, on the changed body's fingerprint.
	if v, err := appsim.Reserve.Run(ctx, c, []string{findKey}, appsim.Fingerprint(`{"qty":2,"sku":"sku-42"}`), 60).Slice(); err != nil || fmt.Sprint(v) != "[CONFLICT]" {
		t.Errorf("the lesson's reserve on the changed body: %v %v", v, err)
	}
	other := []string{"--url", srv.URL(0), "--preset", "atlasmart", "--principal", "customer-7", "--request", same}
	if v, _, _ := findJSON(t, cli.ExitNotFound, other...); v != "not found: never stored, or expired (retention 5m00s)" {
		t.Errorf("another customer: %q", v)
	}
	rdb := srv.Snapshot(t)
	if v, key, _ := findJSON(t, cli.ExitOK, "--rdb", rdb, "--preset", "atlasmart", "--principal", "customer-42", "--request", same); v != "same request" || key != findKey {
		t.Errorf("--rdb: verdict %q, key %q", v, key)
	}
}

// Missing or wrong inputs get one line naming what the library needs.
func TestFindNamesWhatTheLibraryNeeds(t *testing.T) {
	srv := redistest.Shared(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--preset", "atlasmart", "--key", "k"}, "give --method and --path (or --request), --principal"},
		{[]string{"--preset", "powertools", "--key", "k"}, "give --event FILE and --function NAME"},
		{[]string{"--preset", "atlasmart"}, "find needs what the ticket holds"},
		{[]string{"--preset", "fastapi-idempotency", "--key", "k", "--hmac-secret-env", "IDEMCTL_TEST_UNSET"}, "hmac_secret_env IDEMCTL_TEST_UNSET: the variable is empty or unset"},
		{[]string{"--preset", "powertools", "--runtime", "python", "--key", "k"}, "(Powertools Python) keys records by <function>.<module>.<handler>#<md5 hex"},
		{[]string{"--preset", "powertools", "--runtime", "go", "--event", writeFile(t, "ev", "{}"), "--function", "f"}, `runtime "go": want typescript or python`},
		{[]string{"--preset", "atlasmart", "--request", writeFile(t, "bad", "GET")}, "--request"},
	}
	for _, c := range cases {
		r := clitest.Run(t, nil, append([]string{"find", "--url", srv.URL(0)}, c.args...)...)
		r.MustCode(t, cli.ExitUsage)
		r.OneLineErr(t)
		if !strings.Contains(r.Stderr, c.want) {
			t.Errorf("%v: %q, want it to say %q", c.args, r.Stderr, c.want)
		}
	}
}

// fastapi-idempotency's HMAC fingerprint needs the app's secret: with it
// the request is the same; without it find cannot match and says why.
func TestFindFastAPIWithTheAppSecret(t *testing.T) {
	srv, c := redistest.OwnClient(t)
	fp := "89738863cc385ac61df1ec024d1585e71c3ed6a6645db85a6b11bf3c81c8dc67" // HMAC-SHA256 under s3cret (fastapi_test.go)
	if err := c.HSet(context.Background(), "idem:f-1", "fp", fp, "state", "completed").Err(); err != nil {
		t.Fatal(err)
	}
	req := writeFile(t, "req.http", "POST /orders/%C3%A9%20x?a=1&b=%20 HTTP/1.1\r\nIdempotency-Key: f-1\r\n\r\n{\"qty\": 1}")
	args := []string{"find", "-o", "json", "--url", srv.URL(0), "--preset", "fastapi-idempotency", "--request", req}
	r := clitest.Run(t, map[string]string{"IDEMP_SECRET": "s3cret"}, append(args, "--hmac-secret-env", "IDEMP_SECRET")...)
	r.MustCode(t, cli.ExitOK)
	if !strings.Contains(r.Stdout, `"line": "same request"`) {
		t.Errorf("with the secret: %s", r.Stdout)
	}
	r = clitest.Run(t, nil, args...)
	r.MustCode(t, cli.ExitOK)
	if !strings.Contains(r.Stdout, "made with a secret: set hmac_secret_env") {
		t.Errorf("without the secret: %s", r.Stdout)
	}
}

// The guarded command find prints applies, pinned to the record shown:
// run as printed (with --write, --yes and a reason), it fails the stuck
// lesson record.
func TestFindPrintsACommandThatApplies(t *testing.T) {
	srv, c := redistest.OwnClient(t)
	ctx := context.Background()
	fp := appsim.Fingerprint(`{"qty":1,"sku":"sku-42"}`)
	if _, err := appsim.Reserve.Run(ctx, c, []string{findKey}, fp, 60).Slice(); err != nil {
		t.Fatal(err)
	}
	req := writeFile(t, "req.json", `{"method":"POST","path":"/orders","headers":{"Idempotency-Key":"req-2026-0001"},"body":{"sku":"sku-42","qty":1}}`)
	fresh := clitest.Run(t, nil, "find", "-o", "text", "--url", srv.URL(0), "--preset", "atlasmart", "--principal", "customer-42", "--request", req)
	fresh.MustCode(t, cli.ExitOK)
	if !strings.Contains(fresh.Stdout, "nothing to repair yet: the request is in flight") || strings.Contains(fresh.Stdout, "idemctl fail") {
		t.Errorf("a fresh record: %s", fresh.Stdout)
	}
	r := clitest.Run(t, nil, "find", "-o", "text", "--url", srv.URL(0), "--preset", "atlasmart", "--reserve-ttl", "10m", "--principal", "customer-42", "--request", req)
	r.MustCode(t, cli.ExitOK)
	lines := strings.Split(r.Stdout, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "  idemctl fail ") {
			continue
		}
		words := clitest.ShellWords(t, strings.TrimPrefix(strings.TrimSuffix(l, " <<'EOF'"), "  idemctl "))
		for j, w := range words {
			if w == "REASON" {
				words[j] = "customer ticket 8812"
			}
		}
		args := append(words, "--write", "--yes", "--audit-log", filepath.Join(t.TempDir(), "audit.log"))
		res := clitest.RunStdin(t, lines[i+1]+"\n", nil, args...)
		res.MustCode(t, cli.ExitOK)
		if st := c.HGet(ctx, findKey, "state").Val(); st != "FAILED" {
			t.Errorf("after the printed command: state %q\n%s%s", st, res.Stdout, res.Stderr)
		}
		return
	}
	t.Fatalf("no fail command printed:\n%s", r.Stdout)
}

// A stuck record whose keyspace has a verify hook gets triage, which asks
// the hook before it writes.
func TestFindOffersTriageWhereAHookCanProve(t *testing.T) {
	srv, c := redistest.OwnClient(t)
	ctx := context.Background()
	if _, err := appsim.Reserve.Run(ctx, c, []string{findKey}, appsim.Fingerprint(`{"qty":1,"sku":"sku-42"}`), 60).Slice(); err != nil {
		t.Fatal(err)
	}
	cfg := clitest.WriteConfig(t, `profiles:
  local: {url: "`+srv.URL(0)+`"}
default_profile: local
keyspaces:
  - name: orders
    preset: atlasmart
    reserve_ttl: 10m
    verify:
      command: [/bin/true]
`)
	r := clitest.Run(t, nil, "find", "-o", "text", "--config", cfg, "--keyspace", "orders", "--principal", "customer-42", "--key", "req-2026-0001", "--method", "POST", "--path", "/orders")
	r.MustCode(t, cli.ExitOK)
	if !strings.Contains(r.Stdout, "  idemctl triage --config '"+cfg+"' --keyspace 'orders' --from-file - <<'EOF'") {
		t.Errorf("want triage, pinned:\n%s", r.Stdout)
	}
}
