package acceptance

// Issue 8's security guarantees, each against real redis-server processes:
// TLS verified by default, secrets never printed, and the two least-privilege
// ACL roles docs/acl-roles.md documents.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/cli"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/detect"
	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/recordtest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// secKey is a record key of the atlasmart preset.
func secKey(n string) string { return "atlasmart:ch23:idem:customer-42:POST:/orders:" + n }

// secReserve writes a PROCESSING record the way the application does (the
// lesson's RESERVE script, 60 s TTL) and returns its fingerprint.
func secReserve(t *testing.T, c redis.Scripter, key, body string) string {
	t.Helper()
	fp := appsim.Fingerprint(body)
	got, err := appsim.Reserve.Run(t.Context(), c, []string{key}, fp, 60).StringSlice()
	if err != nil || len(got) == 0 || got[0] != "STARTED" {
		t.Fatalf("RESERVE %s: %v %v", key, got, err)
	}
	return fp
}

// secIntentAndOutcome checks the log ends with an intent and an outcome for
// key sharing an id, and returns the outcome.
func secIntentAndOutcome(t *testing.T, path, key string) audit.Entry {
	t.Helper()
	es := recordtest.AuditLines(t, path)
	if len(es) < 2 {
		t.Fatalf("audit log has %d entries, want an intent and an outcome", len(es))
	}
	in, out := es[len(es)-2], es[len(es)-1]
	if in.Phase != "intent" || out.Phase != "outcome" || in.ID != out.ID || in.Key != key || out.Key != key {
		t.Fatalf("audit log does not end with intent+outcome for %s: %+v / %+v", key, in, out)
	}
	return out
}

// secUserClient is a go-redis client logged in as an ACL user.
func secUserClient(addr, user, pw string) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: addr, Username: user, Password: pw, DisableIdentity: true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}})
}

// ---------------------------------------------------------------- TLS

// TLS is verified by default against --tls-ca; without it, or with the
// wrong CA or name, the connection is refused in one line with a hint;
// --tls-insecure works and warns loudly; TLS flags need rediss://.
func TestTLSVerifiedByDefault(t *testing.T) {
	srv, caPath := redistest.StartTLS(t)
	c, err := redistest.TLSClient(srv.Addr, caPath)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	key := secKey("tls-1")
	secReserve(t, c, key, `{"sku":"tls"}`)
	url := "rediss://" + srv.Addr

	// Verified against the CA: works.
	r := clitest.Run(t, nil, "scan", "--url", url, "--tls-ca", caPath, "--preset", "atlasmart")
	r.MustCode(t, cli.ExitOK)
	if !strings.Contains(r.Stdout, key) || strings.Contains(r.Stderr, "WARNING") {
		t.Fatalf("verified TLS scan: stdout %q stderr %q", r.Stdout, r.Stderr)
	}

	// The CA from a profile works the same way.
	cfg := clitest.WriteConfig(t, "profiles:\n  tls:\n    url: "+url+"/0\n    tls_ca: "+caPath+"\n")
	clitest.Run(t, nil, "stats", "--config", cfg, "--profile", "tls", "--preset", "atlasmart", "-o", "json").MustCode(t, cli.ExitOK)

	// Not verifiable: the system roots do not know the test CA, another CA
	// did not sign it, or the name differs.
	otherCA, err := redistest.NewCA(t.TempDir(), "other-ca.pem")
	if err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string][]string{
		"no --tls-ca":   {"--url", url},
		"another CA":    {"--url", url, "--tls-ca", otherCA.PEMPath},
		"name mismatch": {"--url", "rediss://localhost:" + strconv.Itoa(srv.Port), "--tls-ca", caPath},
	} {
		r := clitest.Run(t, nil, append([]string{"scan", "--preset", "atlasmart"}, args...)...)
		r.MustCode(t, cli.ExitError)
		r.OneLineErr(t)
		if !strings.Contains(r.Stderr, "certificate") || !strings.Contains(r.Stderr, "--tls-ca") ||
			!strings.Contains(r.Stderr, "cannot connect to Redis at") || r.Stdout != "" {
			t.Errorf("%s: want a one-line certificate error with a --tls-ca hint, got stderr %q stdout %q", name, r.Stderr, r.Stdout)
		}
	}

	// --tls-insecure: works, and says loudly that nothing was verified.
	r = clitest.Run(t, nil, "scan", "--url", url, "--tls-insecure", "--preset", "atlasmart")
	r.MustCode(t, cli.ExitOK)
	if !strings.Contains(r.Stdout, key) || !strings.Contains(r.Stderr, "WARNING") ||
		!strings.Contains(r.Stderr, "--tls-insecure") || !strings.Contains(r.Stderr, "NOT verified") {
		t.Fatalf("--tls-insecure: stdout %q stderr %q", r.Stdout, r.Stderr)
	}

	// TLS flags with a plaintext URL are a usage error, before any dial.
	for _, flag := range [][]string{{"--tls-ca", caPath}, {"--tls-insecure"}} {
		r := clitest.Run(t, nil, append([]string{"scan", "--url", "redis://" + srv.Addr, "--preset", "atlasmart"}, flag...)...)
		r.MustCode(t, cli.ExitUsage)
		r.OneLineErr(t)
		if !strings.Contains(r.Stderr, "rediss://") {
			t.Errorf("%v with redis://: %q", flag, r.Stderr)
		}
	}
}

// ---------------------------------------------------------------- secrets

const (
	secPW    = "s3cr3t-PW-do-not-print-4f9a" // the right password
	secWrong = "wr0ng-PW-do-not-print-77c1"  // a wrong one, just as secret
)

// secNoLeak fails when a password, or a telling piece of one, was printed.
func secNoLeak(t *testing.T, what string, r clitest.Result, extra ...string) {
	t.Helper()
	for _, s := range []string{secPW, secWrong, "do-not-print"} {
		if strings.Contains(r.Stdout, s) || strings.Contains(r.Stderr, s) {
			t.Errorf("%s: a password appears in the output\nstdout: %.500s\nstderr: %s", what, r.Stdout, r.Stderr)
			return
		}
	}
	for _, path := range extra {
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), "do-not-print") {
			t.Errorf("%s: a password appears in %s", what, path)
		}
	}
}

// Passwords from --password-env, --password-file and the URL are never
// printed: not on success, a wrong password, an unreachable host, a TLS
// failure, an interrupted scan, a refused or applied write (nor in the
// audit log); a config holding one warns when others can read it.
func TestSecretsNeverPrinted(t *testing.T) {
	srv := redistest.Shared(t)
	ctx := t.Context()
	admin := srv.Client(0)
	defer admin.Close()
	if err := admin.Do(ctx, "ACL", "SETUSER", "sec-ops", "reset", "on", ">"+secPW, "~*", "&*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Do(context.Background(), "ACL", "DELUSER", "sec-ops") })
	key := secKey("secret-1")
	secReserve(t, admin, key, `{"sku":"secret"}`)

	dir := t.TempDir()
	pwFile, wrongFile := filepath.Join(dir, "pw"), filepath.Join(dir, "wrong")
	os.WriteFile(pwFile, []byte(secPW+"\n"), 0o600)
	os.WriteFile(wrongFile, []byte(secWrong+"\n"), 0o600)
	env := map[string]string{"IDEM_PW": secPW, "IDEM_WRONG": secWrong}

	closedPort, _ := redistest.FreePort()
	closed := "127.0.0.1:" + strconv.Itoa(closedPort)
	tlsSrv, _ := redistest.StartTLS(t)

	// How each source supplies a password, for a host.
	type source struct {
		name string
		args func(scheme, addr, pw string) []string
	}
	sources := []source{
		{"--password-env", func(scheme, addr, pw string) []string {
			v := "IDEM_PW"
			if pw == secWrong {
				v = "IDEM_WRONG"
			}
			return []string{"--url", scheme + "://sec-ops@" + addr + "/0", "--password-env", v}
		}},
		{"--password-file", func(scheme, addr, pw string) []string {
			f := pwFile
			if pw == secWrong {
				f = wrongFile
			}
			return []string{"--url", scheme + "://" + addr + "/0", "--user", "sec-ops", "--password-file", f}
		}},
		{"URL", func(scheme, addr, pw string) []string {
			return []string{"--url", scheme + "://sec-ops:" + pw + "@" + addr + "/0"}
		}},
	}
	for _, src := range sources {
		scan := func(scheme, addr, pw string, extra ...string) clitest.Result {
			args := append([]string{"scan", "--preset", "atlasmart", "--dial-timeout", "500ms", "--read-timeout", "1s"}, src.args(scheme, addr, pw)...)
			return clitest.Run(t, env, append(args, extra...)...)
		}
		r := scan("redis", srv.Addr, secPW)
		r.MustCode(t, cli.ExitOK)
		if !strings.Contains(r.Stdout, key) {
			t.Fatalf("%s: the scan did not list the record: %q", src.name, r.Stdout)
		}
		secNoLeak(t, src.name+" success", r)
		if src.name == "URL" && !strings.Contains(r.Stderr, "visible in the process list") {
			t.Errorf("a password in --url should warn: %q", r.Stderr)
		}

		r = scan("redis", srv.Addr, secWrong)
		r.MustCode(t, cli.ExitError)
		r.OneLineErr(t)
		if !strings.Contains(r.Stderr, "WRONGPASS") || !strings.Contains(r.Stderr, "sec-ops") {
			t.Errorf("%s wrong password: %q", src.name, r.Stderr)
		}
		secNoLeak(t, src.name+" wrong password", r)

		r = scan("redis", closed, secPW)
		r.MustCode(t, cli.ExitError)
		r.OneLineErr(t)
		if !strings.Contains(r.Stderr, "connection refused") {
			t.Errorf("%s unreachable: %q", src.name, r.Stderr)
		}
		secNoLeak(t, src.name+" unreachable", r)

		r = scan("rediss", tlsSrv.Addr, secPW, "--dial-timeout", "5s") // no --tls-ca: verification fails
		r.MustCode(t, cli.ExitError)
		r.OneLineErr(t)
		if !strings.Contains(r.Stderr, "certificate") {
			t.Errorf("%s TLS failure: %q", src.name, r.Stderr)
		}
		secNoLeak(t, src.name+" TLS verification failure", r)

		r = scan("rediss", srv.Addr, secPW, "--read-timeout", "500ms") // TLS to a plaintext server
		r.MustCode(t, cli.ExitError)
		r.OneLineErr(t)
		secNoLeak(t, src.name+" TLS handshake with a plaintext server", r)
	}

	// A write refused for want of confirmation prints the exact command to
	// run: where the password comes from, never the password.
	auditLog := filepath.Join(dir, "audit", "audit.log")
	for _, src := range sources {
		args := append([]string{"fail", key, "--reason", "stuck since the deploy", "--write", "--audit-log", auditLog,
			"--preset", "atlasmart"}, src.args("redis", srv.Addr, secPW)...)
		r := clitest.Run(t, env, args...)
		r.MustCode(t, cli.ExitRefused)
		if !strings.Contains(r.Stderr, "--yes --from-file -") {
			t.Fatalf("%s: no exact command printed: %q", src.name, r.Stderr)
		}
		secNoLeak(t, src.name+" unconfirmed write", r)
	}

	// An applied write with the password in the URL: the audit log names
	// the user and address, never the password.
	r := clitest.Run(t, env, "fail", key, "--reason", "stuck since the deploy", "--write", "--yes", "--audit-log", auditLog,
		"--preset", "atlasmart", "--url", "redis://sec-ops:"+secPW+"@"+srv.Addr+"/0")
	r.MustCode(t, cli.ExitOK)
	secNoLeak(t, "applied write", r, auditLog)
	out := secIntentAndOutcome(t, auditLog, key)
	if out.Outcome != write.Applied || out.Address != "redis://sec-ops@"+srv.Addr+"/0" || out.RedisUser != "sec-ops" {
		t.Fatalf("audit outcome: %+v", out)
	}
	if st, err := os.Stat(auditLog); err != nil {
		t.Error(err)
	} else if st.Mode().Perm()&0o077 != 0 {
		t.Errorf("the audit log should be private (0600), it is %04o", st.Mode().Perm())
	}

	// An interrupted scan reports how far it got, without the URL's password.
	own, oc := redistest.OwnClient(t)
	oc.Do(ctx, "ACL", "SETUSER", "sec-ops", "reset", "on", ">"+secPW, "~*", "&*", "+@all")
	clitest.Seed(t, own.URL(0), 5000)
	r = clitest.RunWatched(t, nil, func() { own.Stop() }, "scan", "--url", "redis://sec-ops:"+secPW+"@"+own.Addr+"/0",
		"--preset", "atlasmart", "--count", "100", "--keys-per-sec", "5000", "--dial-timeout", "500ms", "--read-timeout", "500ms")
	r.MustCode(t, cli.ExitIncomplete)
	if !strings.Contains(r.Stderr, "scan incomplete") {
		t.Errorf("interrupted scan: %q", r.Stderr)
	}
	secNoLeak(t, "interrupted scan", r)

	// A config file holding a password warns when others may read it.
	for _, tc := range []struct {
		mode os.FileMode
		warn bool
	}{{0o644, true}, {0o640, true}, {0o600, false}} {
		cfg := clitest.WriteConfig(t, "profiles:\n  p:\n    url: redis://sec-ops:"+secPW+"@"+srv.Addr+"/0\n")
		if err := os.Chmod(cfg, tc.mode); err != nil {
			t.Fatal(err)
		}
		r := clitest.Run(t, nil, "scan", "--config", cfg, "--profile", "p", "--preset", "atlasmart")
		r.MustCode(t, cli.ExitOK)
		secNoLeak(t, "config "+tc.mode.String(), r)
		if got := strings.Contains(r.Stderr, "readable by others"); got != tc.warn {
			t.Errorf("config mode %04o: warning %v, want %v: %q", tc.mode, got, tc.warn, r.Stderr)
		}
	}
	// Without a password in it, a world-readable config is fine.
	cfg := clitest.WriteConfig(t, "profiles:\n  p:\n    url: redis://sec-ops@"+srv.Addr+"/0\n    password_env: IDEM_PW\n")
	os.Chmod(cfg, 0o644)
	r = clitest.Run(t, env, "scan", "--config", cfg, "--profile", "p", "--preset", "atlasmart")
	r.MustCode(t, cli.ExitOK)
	if strings.Contains(r.Stderr, "readable by others") {
		t.Errorf("a config without a password should not warn: %q", r.Stderr)
	}
}

// A password with characters a URL needs encoded ('/', '#', '?', '%', '@')
// makes the URL malformed; the usage error must not quote any part of it.
func TestSecretsNeverPrintedMalformedURL(t *testing.T) {
	const head, tail = "Qx7Wv", "Jk3Zp"
	for _, sep := range []string{"/", "#", "?", "%", "@x/"} {
		pw := head + sep + tail
		for _, u := range []string{
			"redis://ops:" + pw + "@127.0.0.1:6379/0",
			"redis://ops:" + pw + "@127.0.0.1:6379",
			"rediss://:" + pw + "@127.0.0.1",
		} {
			r := clitest.Run(t, nil, "scan", "--url", u, "--preset", "atlasmart", "--dial-timeout", "300ms")
			if r.Code == cli.ExitOK {
				t.Fatalf("%q: exit 0", u)
			}
			r.OneLineErr(t)
			for i := 0; i+3 <= len(pw); i++ {
				if w := pw[i : i+3]; strings.Contains(r.Stderr+r.Stdout, w) {
					t.Errorf("--url %q: the output holds %q, a piece of the password: %q", u, w, r.Stderr)
					break
				}
			}
		}
	}
}

// ---------------------------------------------------------------- ACL roles

// The roles' ACL SETUSER lines as this test proposes them, used only when
// docs/acl-roles.md has no line for a role: the documented lines are
// the ones tested.
const (
	secProposedInspectorACL = "ACL SETUSER idemctl-inspector on >PASSWORD resetkeys ~atlasmart:* ~idempotency:* resetchannels -@all " +
		"+ping +info +time +scan +type +exists +pttl +hmget +hget +hgetall +hlen +hstrlen +strlen +getrange +memory|usage +object|encoding +cluster|slots +readonly +evalsha +script|load"
	secProposedOperatorACL = "ACL SETUSER idemctl-operator on >PASSWORD resetkeys ~atlasmart:* ~idempotency:* ~idemctl:audit resetchannels -@all " +
		"+ping +info +time +scan +type +exists +pttl +hmget +hgetall +hlen +hstrlen +strlen +getrange +memory|usage +object|encoding +cluster|slots +readonly " +
		"+evalsha +eval +script|load +hget +get +hset +set +del +pexpire +persist +xadd"
)

// secReadmeACL returns the documented ACL SETUSER line for user, or proposed
// (logged) when the page has none yet.
func secReadmeACL(t *testing.T, user, proposed string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(clitest.RepoRoot, "docs", "acl-roles.md"))
	if err != nil {
		t.Fatal(err)
	}
	line := ""
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "ACL SETUSER "+user+" ") {
			if line != "" {
				t.Fatalf("docs/acl-roles.md has two ACL SETUSER lines for %s", user)
			}
			line = l
		}
	}
	if line == "" {
		t.Logf("docs/acl-roles.md has no ACL SETUSER line for %s yet; testing the proposed one:\n%s", user, proposed)
		line = proposed
	}
	f := strings.Fields(line)
	if !strings.Contains(line, ">PASSWORD") {
		t.Fatalf("the documented line for %s sets no >PASSWORD: %s", user, line)
	}
	return f
}

// secFieldTTLs reports whether the server has hash-field TTLs (Redis 7.4+).
func secFieldTTLs(admin *redis.Client) bool {
	ok, _ := redistest.HasFieldTTL(admin)
	return ok
}

// secReadmeRights returns the rights docs/acl-roles.md lists on its line
// `<!-- name -->` `+a +b …` (the additions for newer servers).
func secReadmeRights(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(clitest.RepoRoot, "docs", "acl-roles.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if _, rest, ok := strings.Cut(l, "<!-- "+name+" -->"); ok {
			var out []string
			for _, f := range strings.Fields(strings.ReplaceAll(rest, "`", " ")) {
				if strings.HasPrefix(f, "+") {
					out = append(out, f)
				}
			}
			return out
		}
	}
	t.Fatalf("docs/acl-roles.md has no <!-- %s --> line", name)
	return nil
}

// secSetUser runs an ACL SETUSER line with the password filled in.
func secSetUser(t *testing.T, admin *redis.Client, fields []string, pw string) {
	t.Helper()
	args := make([]any, len(fields))
	for i, f := range fields {
		if f == ">PASSWORD" {
			f = ">" + pw
		}
		args[i] = f
	}
	if err := admin.Do(t.Context(), args...).Err(); err != nil {
		t.Fatalf("%v: %v", fields[:3], err)
	}
	t.Cleanup(func() { admin.Do(context.Background(), "ACL", "DELUSER", fields[2]) })
}

// secACLDenials lists what ACL LOG recorded as refused to user.
func secACLDenials(t *testing.T, admin *redis.Client, user string) []string {
	t.Helper()
	entries, err := admin.ACLLog(t.Context(), 1000).Result()
	if err != nil {
		t.Fatalf("ACL LOG: %v", err)
	}
	var out []string
	for _, e := range entries {
		if e.Username == user {
			out = append(out, e.Reason+" "+e.Object+" ("+e.Context+")")
		}
	}
	return out
}

// The documented two roles, created exactly as documented: the inspector can
// scan, stats, detect and open a record without a single refusal and is
// refused writes with an explanation; the operator writes, audited to the
// stream.
func TestACLRolesLeastPrivilege(t *testing.T) {
	srv := redistest.Shared(t)
	ctx := t.Context()
	admin := srv.Client(0)
	defer admin.Close()
	inspector := secReadmeACL(t, "idemctl-inspector", secProposedInspectorACL)
	operator := secReadmeACL(t, "idemctl-operator", secProposedOperatorACL)
	if secFieldTTLs(admin) {
		// Redis 7.4+: the rights the page adds for hash-field TTLs.
		inspector = append(inspector, secReadmeRights(t, "inspector-field-ttl")...)
		operator = append(operator, secReadmeRights(t, "operator-field-ttl")...)
	}
	secSetUser(t, admin, inspector, "insp-"+secPW)
	secSetUser(t, admin, operator, "oper-"+secPW)
	env := map[string]string{"INSP_PW": "insp-" + secPW, "OPER_PW": "oper-" + secPW}
	asInspector := []string{"--url", "redis://idemctl-inspector@" + srv.Addr + "/0", "--password-env", "INSP_PW"}
	asOperator := []string{"--url", "redis://idemctl-operator@" + srv.Addr + "/0", "--password-env", "OPER_PW"}

	// Records of two formats, one hash too large to read whole.
	clitest.Seed(t, srv.URL(0), 300, "--reserve-ttl", "1h", "--processing-timeout", "10m")
	clitest.Seed(t, srv.URL(0), 50, "--preset", "setnx")
	big := secKey("big-1")
	secReserve(t, admin, big, `{"sku":"big"}`)
	admin.HSet(ctx, big, "response", strings.Repeat("x", 300<<10))
	k1, k2 := secKey("acl-1"), secKey("acl-2")
	fp1 := secReserve(t, admin, k1, `{"sku":"acl-1"}`)
	secReserve(t, admin, k2, `{"sku":"acl-2"}`)
	admin.Do(ctx, "ACL", "LOG", "RESET")

	// The inspector reads everything it needs.
	r := clitest.Run(t, env, append([]string{"scan", "--preset", "atlasmart", "-o", "ndjson"}, asInspector...)...)
	r.MustCode(t, cli.ExitOK)
	if n := strings.Count(r.Stdout, "\n"); n != 303 || strings.Contains(r.Stdout, `"memory_bytes":null`) || strings.Contains(r.Stderr, "MEMORY") {
		t.Fatalf("scan as inspector: %d records, stderr %q", n, r.Stderr)
	}
	r = clitest.Run(t, env, append([]string{"scan", "--preset", "setnx", "-o", "ndjson"}, asInspector...)...)
	r.MustCode(t, cli.ExitOK)
	if n := strings.Count(r.Stdout, "\n"); n != 50 {
		t.Fatalf("setnx scan as inspector: %d records", n)
	}
	// stats by the script path (scan above read by the client's, auto's
	// choice): the role must allow both.
	r = clitest.Run(t, env, append([]string{"stats", "--preset", "atlasmart", "-o", "json", "--read-path", "script"}, asInspector...)...)
	r.MustCode(t, cli.ExitOK)
	var st clitest.StatsOut
	if err := json.Unmarshal([]byte(r.Stdout), &st); err != nil || st.Total != 303 || !st.Complete || st.Memory.KnownRecords != 303 {
		t.Fatalf("stats as inspector: %v %+v", err, st)
	}
	r = clitest.Run(t, env, append([]string{"check", "--preset", "atlasmart", "--max-unknown-state", "1000000"}, asInspector...)...)
	r.MustCode(t, cli.ExitOK)
	// A pattern matching nothing in a database with keys: DBSIZE tells, within the role.
	r = clitest.Run(t, env, append([]string{"check", "--preset", "atlasmart", "--match", "atlasmart:none:*", "--max-stale", "0"}, asInspector...)...)
	r.MustCode(t, cli.ExitUnjudged)
	ic := secUserClient(srv.Addr, "idemctl-inspector", "insp-"+secPW)
	defer ic.Close()
	ks := secKeyspace(t, "atlasmart")
	var details []inspect.Detail
	for _, k := range []string{k1, big} {
		d, err := inspect.FetchDetail(ctx, ic, ks, k)
		if err != nil {
			t.Fatalf("detail of %s as inspector: %v", k, err)
		}
		details = append(details, d)
	}
	// Not one command refused: idemctl degrades quietly where a right is
	// missing (memory, encoding, fields unknown), so the ACL LOG is the proof.
	if denied := secACLDenials(t, admin, "idemctl-inspector"); len(denied) > 0 {
		t.Fatalf("the documented inspector role lacks rights idemctl uses (ACL LOG): %v", denied)
	}
	for _, d := range details {
		names := map[string]string{}
		for _, f := range d.Fields {
			names[f.Name] = f.Value
		}
		if names["state"] != "PROCESSING" || names["fingerprint"] == "" || d.Encoding == "" || d.Record.MemoryBytes <= 0 {
			t.Fatalf("detail of %s as inspector: encoding %q, fields %v, partial %q", d.Record.Key, d.Encoding, names, d.Partial)
		}
	}

	// detect too; it scores every preset on the sample, and a preset with
	// lock companions (marker-lock) probes keys outside the role's patterns:
	// refused per key by the ACL (and logged there), never a failed command.
	admin.Do(ctx, "ACL", "LOG", "RESET")
	r = clitest.Run(t, env, append([]string{"detect", "--match", "atlasmart:ch23:idem:*", "-o", "json"}, asInspector...)...)
	r.MustCode(t, cli.ExitOK)
	var det detect.DetectResult
	if err := json.Unmarshal([]byte(r.Stdout), &det); err != nil || det.Best == nil || det.Best.Preset != "atlasmart" {
		t.Fatalf("detect as inspector: %v %s", err, r.Stdout)
	}
	keyDenials := 0
	for _, d := range secACLDenials(t, admin, "idemctl-inspector") {
		if !strings.HasPrefix(d, "key ") {
			t.Fatalf("detect as inspector: a command was refused (ACL LOG): %s", d)
		}
		keyDenials++
	}
	if keyDenials > 0 {
		t.Logf("detect as inspector: %d key probes outside the role's key patterns were refused by the ACL", keyDenials)
	}

	// It read by the script path, and its right to run scripts writes
	// nothing: the server checks what a script runs against the caller.
	for _, c := range st.Coverage {
		if c.ReadPath != "script" {
			t.Errorf("stats as inspector read %s by %q, want the script path", c.Keyspace, c.ReadPath)
		}
	}
	sha, err := ic.ScriptLoad(ctx, `return redis.call('HSET', KEYS[1], 'state', 'FAILED')`).Result()
	if err != nil {
		t.Fatalf("SCRIPT LOAD as inspector: %v", err)
	}
	// Redis 7 and Valkey: "can't run this command"; Redis 8: "ACL failure in script".
	if err := ic.EvalSha(ctx, sha, []string{k1}).Err(); err == nil || !strings.Contains(err.Error(), "can't run this command") && !strings.Contains(err.Error(), "ACL failure") {
		t.Fatalf("a writing script run by the inspector: %v, want the ACL's refusal", err)
	}

	// The inspector may not write: refused, explained, nothing changed.
	auditLog := recordtest.AuditPath(t)
	before := admin.HGetAll(ctx, k1).Val()
	r = clitest.Run(t, env, append([]string{"fail", k1, "--reason", "stuck", "--write", "--yes", "--audit-log", auditLog,
		"--preset", "atlasmart"}, asInspector...)...)
	r.MustCode(t, cli.ExitRefused)
	for _, want := range []string{"NOPERM", "idemctl-inspector", "+evalsha", "operator"} {
		if !strings.Contains(r.Stderr+r.Stdout, want) {
			t.Errorf("the refusal does not mention %q: stdout %q stderr %q", want, r.Stdout, r.Stderr)
		}
	}
	if after := admin.HGetAll(ctx, k1).Val(); !secSameMap(before, after) {
		t.Fatalf("the inspector changed the record: %v -> %v", before, after)
	}
	// Refused before anything was sent (the inspector cannot even read the
	// record's version): one audited outcome line, no intent.
	if es := recordtest.AuditLines(t, auditLog); len(es) != 1 || es[0].Phase != "outcome" || es[0].Key != k1 || es[0].Outcome != write.Refused {
		t.Fatalf("audited refusal: %+v", es)
	}

	// The operator writes (the script cache is empty: EVALSHA, then EVAL).
	admin.ScriptFlush(ctx)
	admin.Do(ctx, "ACL", "LOG", "RESET")
	r = clitest.Run(t, env, append([]string{"fail", k1, "--reason", "stuck", "--write", "--yes", "--audit-log", auditLog,
		"--preset", "atlasmart", "--expect-fingerprint", fp1}, asOperator...)...)
	r.MustCode(t, cli.ExitOK)
	if got := admin.HGet(ctx, k1, "state").Val(); got != "FAILED" {
		t.Fatalf("operator fail: state %q", got)
	}
	if out := secIntentAndOutcome(t, auditLog, k1); out.Outcome != write.Applied || out.RedisUser != "idemctl-operator" {
		t.Fatalf("audited: %+v", out)
	}

	// With an audit stream configured, the operator's XADDs succeed too.
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	os.WriteFile(cfg, []byte("profiles:\n  ops:\n    url: redis://idemctl-operator@"+srv.Addr+"/0\n    password_env: OPER_PW\n"+
		"    audit_log: "+auditLog+"\n    audit_stream: idemctl:audit\n"), 0o600)
	r = clitest.Run(t, env, "fail", k2, "--reason", "stuck", "--write", "--yes", "--config", cfg, "--profile", "ops", "--preset", "atlasmart")
	r.MustCode(t, cli.ExitOK)
	if strings.Contains(r.Stderr, "audit stream") {
		t.Fatalf("audit stream refused: %q", r.Stderr)
	}
	entries, err := admin.XRange(ctx, "idemctl:audit", "-", "+").Result()
	if err != nil || len(entries) != 2 {
		t.Fatalf("audit stream: %v, %d entries, want intent and outcome", err, len(entries))
	}
	for i, phase := range []string{"intent", "outcome"} {
		var e audit.Entry
		raw, _ := entries[i].Values["entry"].(string)
		if err := json.Unmarshal([]byte(raw), &e); err != nil || e.Phase != phase || e.Key != k2 || strings.Contains(raw, "do-not-print") {
			t.Fatalf("stream entry %d: %v %s", i, err, raw)
		}
	}
	if denied := secACLDenials(t, admin, "idemctl-operator"); len(denied) > 0 {
		t.Fatalf("the operator role lacks rights idemctl uses (ACL LOG): %v", denied)
	}
}

func secKeyspace(t *testing.T, preset string) *inspect.Keyspace {
	t.Helper()
	s, err := inspect.Preset(preset)
	if err != nil {
		t.Fatal(err)
	}
	ks, err := inspect.NewKeyspace(inspect.KeyspaceSpec{Name: preset, Schema: s})
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

func secSameMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
