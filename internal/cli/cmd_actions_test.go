package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/appsim"
	"github.com/idemctl/idemctl/internal/redistest"
)

// runCLIStdin is runCLI with something on stdin (still not a terminal).
func runCLIStdin(t *testing.T, stdin string, env map[string]string, args ...string) cliResult {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), testIO(t, env, stdin, &out, &errb), args)
	return cliResult{out.String(), errb.String(), code}
}

const cliKey = "atlasmart:ch23:idem:customer-7:POST:/orders:req-cli"

// reserve creates a PROCESSING record the way the application does.
func reserve(t *testing.T, srv *redistest.Server, key, body string) string {
	t.Helper()
	c := srv.Client(0)
	defer c.Close()
	fp := appsim.Fingerprint(body)
	if got, err := appsim.Reserve.Run(context.Background(), c, []string{key}, fp, 60).StringSlice(); err != nil || got[0] != "STARTED" {
		t.Fatalf("RESERVE %s: %v %v", key, got, err)
	}
	return fp
}

func hgetall(t *testing.T, srv *redistest.Server, key string) map[string]string {
	t.Helper()
	c := srv.Client(0)
	defer c.Close()
	return c.HGetAll(context.Background(), key).Val()
}

// printedCommand finds the exact command a refused run printed, split into
// arguments as a shell would, and the here-document it feeds on stdin.
func printedCommand(t *testing.T, stderr string) (args []string, stdin string) {
	t.Helper()
	lines := strings.Split(stderr, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "  idemctl ") {
			continue
		}
		words := shellWords(t, strings.TrimPrefix(l, "  idemctl "))
		if n := len(words); n < 4 || words[n-1] != "<<EOF" || words[n-2] != "-" || words[n-3] != "--from-file" || words[n-4] != "--yes" {
			t.Fatalf("the printed command does not end with --yes --from-file - <<'EOF': %q", l)
		}
		var doc strings.Builder
		for _, d := range lines[i+1:] {
			if d == "EOF" {
				return words[:len(words)-1], doc.String()
			}
			doc.WriteString(d + "\n")
		}
		t.Fatalf("unterminated here-document in %q", stderr)
	}
	t.Fatalf("no command printed:\n%s", stderr)
	return nil, ""
}

// shellWords splits a POSIX shell line of plain words and single quotes.
func shellWords(t *testing.T, s string) []string {
	t.Helper()
	var out []string
	var cur strings.Builder
	in, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quoted:
			if c == '\'' {
				quoted = false
			} else {
				cur.WriteByte(c)
			}
		case c == '\'':
			quoted, in = true, true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			in = true
		case c == ' ':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		case strings.ContainsRune("\"$`;&|()", rune(c)):
			t.Fatalf("unexpected shell syntax %q in %q", c, s)
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if quoted {
		t.Fatalf("unterminated quote in %q", s)
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// auditLines reads the audit log or fails the test.
func auditLines(t *testing.T, path string) []actions.AuditEntry {
	t.Helper()
	out, err := actions.ReadAuditLog(path)
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	return out
}

// Writes are refused unless enabled: nothing is read, written or audited.
func TestActionCLIReadOnly(t *testing.T) {
	srv := redistest.Shared(t)
	reserve(t, srv, cliKey, "body")
	before := hgetall(t, srv, cliKey)
	audit := filepath.Join(t.TempDir(), "audit.log")
	for _, args := range [][]string{
		{"fail", cliKey},
		{"reconcile", cliKey, "--ref", "ord-1"},
		{"expire", cliKey, "--ttl", "0"},
		{"fail", cliKey, "--yes"},
	} {
		r := runCLI(t, nil, append(args, "--reason", "x", "--url", srv.URL(0), "--preset", "atlasmart", "--audit-log", audit)...)
		r.mustCode(t, exitRefused)
		r.oneLineErr(t)
		if !strings.Contains(r.stderr, "read-only") || !strings.Contains(r.stderr, "--write") {
			t.Fatalf("%v: %q", args, r.stderr)
		}
	}
	if after := hgetall(t, srv, cliKey); after["state"] != "PROCESSING" || len(after) != len(before) {
		t.Fatalf("record changed: %q", after)
	}
	if _, err := os.Stat(audit); !os.IsNotExist(err) {
		t.Fatalf("an audit log was written for refused writes: %v", err)
	}
	// A dry run with writes off shows the plan and exits 0.
	r := runCLI(t, nil, "fail", cliKey, "--reason", "x", "--url", srv.URL(0), "--preset", "atlasmart", "--dry-run")
	r.mustCode(t, exitOK)
	if !strings.Contains(r.stderr, "FAILED") || !strings.Contains(r.stderr, "nothing was written") {
		t.Fatalf("dry run: %q", r.stderr)
	}
}

// pinnedLine checks a here-document of one --from-file line: the key, its
// state and fingerprint, and the version (20 hex characters).
func pinnedLine(doc, key, state, fp string) bool {
	cols := strings.Split(strings.TrimSuffix(doc, "\n"), "\t")
	return strings.Count(doc, "\n") == 1 && len(cols) == 4 && cols[0] == key && cols[1] == state && cols[2] == fp &&
		actions.ValidVersion(cols[3])
}

// Without a terminal and without --yes, a write is refused with the exact
// command to run; that command applies once, and conflicts the second time.
func TestActionCLIConfirmAndExactCommand(t *testing.T) {
	srv := redistest.Shared(t)
	env := map[string]string{"XDG_STATE_HOME": t.TempDir()} // the printed command audits to the default log
	fp := reserve(t, srv, cliKey, "body")

	r := runCLI(t, env, "fail", cliKey, "--reason", "worker died; it's INC-7", "--url", srv.URL(0), "--preset", "atlasmart", "--write")
	r.mustCode(t, exitRefused)
	if !strings.Contains(r.stderr, "--yes --from-file -") {
		t.Fatalf("no exact command: %q", r.stderr)
	}
	args, stdin := printedCommand(t, r.stderr)
	if !pinnedLine(stdin, cliKey, "PROCESSING", fp) {
		t.Fatalf("here-document %q", stdin)
	}
	if got := hgetall(t, srv, cliKey)["state"]; got != "PROCESSING" {
		t.Fatalf("an unconfirmed write changed the record: %s", got)
	}

	r = runCLIStdin(t, stdin, env, args...)
	r.mustCode(t, exitOK)
	if !strings.HasPrefix(r.stdout, "applied") || !strings.Contains(r.stdout, "summary: 1 applied") {
		t.Fatalf("stdout %q", r.stdout)
	}
	got := hgetall(t, srv, cliKey)
	if got["state"] != "FAILED" || got["reason"] != "worker died; it's INC-7" || got["failed_by"] == "" {
		t.Fatalf("record %q", got)
	}
	es := auditLines(t, filepath.Join(env["XDG_STATE_HOME"], "idemctl", "audit.log"))
	if len(es) != 2 || es[0].Phase != "intent" || es[1].Outcome != actions.Applied || es[0].ID != es[1].ID {
		t.Fatalf("audit %+v", es)
	}

	// The same command again is the same run: the record it applied is
	// reported already_applied, not a conflict, and nothing is written.
	r = runCLIStdin(t, stdin, env, args...)
	r.mustCode(t, exitOK)
	if !strings.HasPrefix(r.stdout, "already_applied") || fmt.Sprint(got) != fmt.Sprint(hgetall(t, srv, cliKey)) {
		t.Fatalf("stdout %q", r.stdout)
	}

	// An absent key.
	r = runCLI(t, env, "fail", cliKey+"-gone", "--reason", "x", "--url", srv.URL(0), "--preset", "atlasmart", "--write", "--yes")
	r.mustCode(t, exitNotFound)
}

// A bulk run where some records changed since they were shown: the rest
// apply, the changed ones conflict, and the exit code says partial.
func TestActionCLIBulkPartial(t *testing.T) {
	srv := redistest.Shared(t)
	env := map[string]string{"XDG_STATE_HOME": t.TempDir()}
	keys := []string{cliKey + "-a", cliKey + "-b", cliKey + "-c"}
	fps := make([]string, len(keys))
	for i, k := range keys {
		fps[i] = reserve(t, srv, k, "body-"+k)
	}
	r := runCLI(t, env, append([]string{"expire", "--reason", "stuck batch", "--ttl", "0", "--url", srv.URL(0), "--preset", "atlasmart", "--write"}, keys...)...)
	r.mustCode(t, exitRefused)
	args, stdin := printedCommand(t, r.stderr)
	if strings.Count(stdin, "\n") != 3 {
		t.Fatalf("here-document %q", stdin)
	}
	// The application completes one of them meanwhile.
	c := srv.Client(0)
	defer c.Close()
	if n, err := appsim.Complete.Run(context.Background(), c, []string{keys[1]}, fps[1], 201, `{"ok":true}`, 300).Int64(); err != nil || n != 1 {
		t.Fatalf("COMPLETE: %d %v", n, err)
	}
	r = runCLIStdin(t, stdin, env, append(args, "--output", "json")...)
	r.mustCode(t, exitPartial)
	var out struct {
		Results []actions.Result `json:"results"`
		Summary map[string]int   `json:"summary"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("json output: %v\n%s", err, r.stdout)
	}
	if out.Summary["applied"] != 2 || out.Summary["conflict"] != 1 || out.Results[1].Key != keys[1] || out.Results[1].Outcome != actions.Conflict {
		t.Fatalf("results %+v", out)
	}
	if n := c.Exists(context.Background(), keys...).Val(); n != 1 {
		t.Fatalf("%d keys left, want the completed one", n)
	}
	if got := c.HGet(context.Background(), keys[1], "state").Val(); got != "SUCCEEDED" {
		t.Fatalf("the completed record: %q", got)
	}
}

// The exact command keeps what the operator chose: the config and profile,
// the audit log, the credentials' source. Run as printed, it writes through
// the same profile and audits to the same file.
func TestActionCLIExactCommandKeepsTheSession(t *testing.T) {
	srv := redistest.Shared(t)
	dir := t.TempDir()
	c := srv.Client(0)
	defer c.Close()
	ctx := context.Background()
	c.Do(ctx, "ACL", "SETUSER", "idem-op", "reset", "on", ">op-pw", "~*", "+@all")
	defer c.Do(ctx, "ACL", "DELUSER", "idem-op")
	cfg := filepath.Join(dir, "config.yaml")
	audit := filepath.Join(dir, "ops-audit.log")
	os.WriteFile(cfg, []byte(`
profiles:
  prod:
    url: redis://`+srv.Addr+`/0
    user: idem-op
    password_env: IDEM_PW
    writes: true
    protected: true
keyspaces:
  - name: orders
    preset: atlasmart
`), 0o600)
	env := map[string]string{"IDEM_PW": "op-pw", "XDG_STATE_HOME": filepath.Join(dir, "default-state")}
	fp := reserve(t, srv, cliKey, "body")
	r := runCLI(t, env, "reconcile", cliKey, "--config", cfg, "--profile", "prod", "--ref", "ord-7", "--reason", "in OMS", "--audit-log", audit)
	r.mustCode(t, exitRefused)
	args, stdin := printedCommand(t, r.stderr)
	if strings.Contains(r.stderr, "op-pw") {
		t.Fatal("the password was printed")
	}
	if !pinnedLine(stdin, cliKey, "PROCESSING", fp) {
		t.Fatalf("here-document %q", stdin)
	}
	// A wrong profile name is refused.
	bad := append([]string{}, args...)
	for i := range bad {
		if bad[i] == "prod" && i > 0 && bad[i-1] == "--confirm-profile" {
			bad[i] = "production"
		}
	}
	runCLIStdin(t, stdin, env, bad...).mustCode(t, exitRefused)

	r = runCLIStdin(t, stdin, env, args...)
	r.mustCode(t, exitOK)
	if got := hgetall(t, srv, cliKey); got["state"] != "SUCCEEDED" || got["reconciled_ref"] != "ord-7" {
		t.Fatalf("record %q", got)
	}
	es := auditLines(t, audit)
	if len(es) != 2 || es[1].Outcome != actions.Applied || es[0].RedisUser != "idem-op" || es[0].Profile != "prod" {
		t.Fatalf("audit %s: %+v", audit, es)
	}
	if _, err := os.Stat(filepath.Join(dir, "default-state")); !os.IsNotExist(err) {
		t.Fatal("the exact command audited somewhere else than the operator's --audit-log")
	}
}

// The write inputs are read by actions' rules, the TUI's: a TTL is
// required for expire and at least 1ms, a reference only where the schema
// records one. Each is a usage error (2), found before the policy and
// before anything is read.
func TestActionCLIWriteInputs(t *testing.T) {
	srv := redistest.Shared(t)
	reserve(t, srv, cliKey, "body")
	c := srv.Client(0)
	defer c.Close()
	const marker = "idempotency:order:cli-1"
	if err := c.Set(context.Background(), marker, "processing", 0).Err(); err != nil {
		t.Fatal(err)
	}
	base := []string{"--reason", "x", "--url", srv.URL(0)}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"reconcile", cliKey, "--preset", "atlasmart", "--write", "--yes"}, "--ref is required: schema atlasmart records"},
		{[]string{"reconcile", cliKey, "--preset", "atlasmart"}, "--ref is required"}, // usage before read-only
		{[]string{"expire", cliKey, "--preset", "atlasmart", "--write"}, "--ttl: required for expire (0 deletes the record)"},
		{[]string{"expire", cliKey, "--preset", "atlasmart", "--ttl", "keep", "--write"}, "--ttl: bad duration"},
		{[]string{"fail", cliKey, "--preset", "atlasmart", "--ttl", "500us", "--write"}, "--ttl: must be at least 1ms, or 0"},
	} {
		r := runCLI(t, nil, append(tc.args, base...)...)
		r.mustCode(t, exitUsage)
		r.oneLineErr(t)
		if !strings.Contains(r.stderr, tc.want) {
			t.Fatalf("%v: %q, want %q", tc.args, r.stderr, tc.want)
		}
	}
	if got := hgetall(t, srv, cliKey)["state"]; got != "PROCESSING" {
		t.Fatalf("a refused input changed the record: %s", got)
	}
	// A bare marker records no reference: reconcile needs none.
	r := runCLI(t, nil, append([]string{"reconcile", marker, "--preset", "setnx", "--dry-run"}, base...)...)
	r.mustCode(t, exitOK)
	if !strings.Contains(r.stderr, "1 of 1 would be written") {
		t.Fatalf("reconcile a marker without --ref: %q", r.stderr)
	}
}
