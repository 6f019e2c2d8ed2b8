package cli_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/cli"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
	"github.com/idemctl/idemctl/internal/testkit/streamtest"
)

// seedGroups is the shared consumer-group fixture (streamtest.SeedGroups).
func seedGroups(t *testing.T, c *redis.Client, key string) []string {
	return streamtest.SeedGroups(t, c, key)
}

func TestStreamsTableAndJSON(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	ids := seedGroups(t, c, "ev:orders")
	base := []string{"streams", "--url", srv.URL(0), "--match", "ev:*"}

	tab := clitest.Run(t, nil, append(base, "-o", "table")...)
	tab.MustCode(t, 0)
	row := regexp.MustCompile(`(?m)^ev:orders\s+billing\s+4\s+1\s+1\s+2\s+1h00m \(idle 10m0\ds\)\s+1$`)
	if !strings.HasPrefix(tab.Stdout, "KEYSPACE ev:* (ev:*): stale after 5m0s idle, poison after 5 deliveries, 1 streams\n") ||
		!row.MatchString(tab.Stdout) || !regexp.MustCompile(`(?m)^ev:orders\s+audit\s+0\s+0\s+0\s+0\s+-\s+0$`).MatchString(tab.Stdout) {
		t.Errorf("table:\n%s", tab.Stdout)
	}

	js := clitest.Run(t, nil, append(base, "-o", "json", "--pending", "--consumer", "c1")...)
	js.MustCode(t, 0)
	var out struct {
		Keyspaces []struct {
			Streams []struct {
				Stream string
				Groups []struct {
					Group               string
					Pending, Stale, Lag int64
					Entries             []struct {
						ID, Consumer  string
						Deliveries    int64
						Stale, Poison bool
					}
					OldestAge int64 `json:"oldest_age_ms"`
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(js.Stdout), &out); err != nil || len(out.Keyspaces) != 1 || len(out.Keyspaces[0].Streams) != 1 {
		t.Fatalf("json: %v\n%s", err, js.Stdout)
	}
	g := out.Keyspaces[0].Streams[0].Groups[1]
	if g.Group != "billing" || g.Pending != 4 || g.Stale != 1 || g.Lag != 1 || len(g.Entries) != 2 ||
		g.Entries[0].ID != ids[0] || !g.Entries[0].Stale || g.Entries[1].ID != ids[2] || !g.Entries[1].Poison || g.Entries[1].Deliveries != 7 ||
		g.OldestAge < 3600_000 || g.OldestAge > 3660_000 {
		t.Errorf("billing: %+v", g)
	}

	p := clitest.Run(t, nil, append(base, "-o", "table", "--pending", "--poison")...)
	p.MustCode(t, 0)
	if lines := strings.Split(strings.TrimSpace(p.Stdout), "\n"); len(lines) != 3 ||
		// idle 1,000 ms at the seed, and the two runs before this one since
		!regexp.MustCompile(`^ev:orders\s+billing\s+`+ids[2]+`\s+c1\s+[1-9]\.\ds\s+7\s+poison$`).MatchString(lines[2]) {
		t.Errorf("--pending --poison:\n%s", p.Stdout)
	}
}

// --fail-on-stale and --fail-on-poison: 8 when found, 3 when none was
// among the entries read but a cap cut the read, else 0.
func TestStreamsExitCodes(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	seedGroups(t, c, "ev:orders")
	base := []string{"streams", "--url", srv.URL(0), "--match", "ev:*", "-o", "json"}
	cfg := clitest.WriteConfig(t, "keyspaces:\n  - name: events\n    kind: stream\n    match: 'ev:*'\n    processing_timeout: 1h\n    groups: [billing]\n")
	cases := []struct {
		args []string
		code int
	}{
		{append(base, "--fail-on-stale"), cli.ExitThreshold},
		{append(base, "--fail-on-poison", "--max-deliveries", "10"), cli.ExitOK},
		{append(base, "--fail-on-poison", "--max-deliveries", "10", "--max-pending", "1"), cli.ExitIncomplete},
		{[]string{"streams", "--url", srv.URL(0), "--config", cfg, "--fail-on-stale"}, cli.ExitOK},
		{[]string{"streams", "--url", srv.URL(0), "--config", cfg, "--fail-on-stale", "--timeout", "1m"}, cli.ExitThreshold},
		{[]string{"streams", "--url", srv.URL(0), "--stream", "ev:orders", "--entry", "1-1"}, cli.ExitNotFound},
		{[]string{"streams", "--url", srv.URL(0)}, cli.ExitUsage},
		{[]string{"streams", "--url", srv.URL(0), "--entry", "1-1"}, cli.ExitUsage},
		{append(base, "--stale"), cli.ExitUsage},
		{append(base, "--max-pending", "0"), cli.ExitUsage},
		{[]string{"streams", "--url", srv.URL(0), "--config", cfg, "--keyspace", "nope"}, cli.ExitUsage},
	}
	for _, k := range cases {
		r := clitest.Run(t, nil, k.args...)
		if r.Code != k.code {
			t.Errorf("idemctl %s: exit %d, want %d\nstderr: %s", strings.Join(k.args, " "), r.Code, k.code, r.Stderr)
		}
		if k.code != cli.ExitOK {
			r.OneLineErr(t)
		}
	}
	if r := clitest.Run(t, nil, "streams", "--url", srv.URL(0), "--config", cfg, "-o", "json"); !strings.Contains(r.Stdout, `"group": "billing"`) || strings.Contains(r.Stdout, `"group": "audit"`) {
		t.Errorf("the config's groups: %s", r.Stdout)
	}
}

// A user the ACL denies XPENDING gets one line naming it.
func TestStreamsNoPerm(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	seedGroups(t, c, "ev:orders")
	redistest.ACLUser(t, c, "streams-reader", "reset", "on", ">pw", "~*", "+@all", "-xpending")
	r := clitest.Run(t, map[string]string{"PW": "pw"}, "streams", "--url", srv.URL(0), "--user", "streams-reader", "--password-env", "PW", "--match", "ev:*")
	r.MustCode(t, cli.ExitError)
	r.OneLineErr(t)
	if !strings.Contains(r.Stderr, "keyspace ev:*: the server's ACL does not let this user run XPENDING (grant +xpending)") {
		t.Errorf("stderr %q", r.Stderr)
	}
}

// A hostile entry (terminal escapes in names and values, a 10 MB field)
// is shown escaped and cut, in the table and in JSON.
func TestStreamsHostileEntry(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	ctx := context.Background()
	key := "ev:\x1b]52;c;aGk=\x07"
	id, err := c.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: []any{"note\x1b[2J", "\u009b31mred\u202e", "big", strings.Repeat("z", 10<<20)}}).Result()
	if err != nil {
		t.Fatal(err)
	}
	c.Do(ctx, "xgroup", "create", key, "g\x1b[1m", "0")
	c.Do(ctx, "xreadgroup", "group", "g\x1b[1m", "c\x07", "streams", key, ">")
	for _, args := range [][]string{
		{"--stream", key, "--entry", id, "-o", "table"},
		{"--stream", key, "--entry", id, "-o", "json"},
		{"--match", "ev:*", "-o", "table", "--pending"},
		{"--match", "ev:*", "-o", "json", "--pending"},
	} {
		r := clitest.Run(t, nil, append([]string{"streams", "--url", srv.URL(0)}, args...)...)
		r.MustCode(t, 0)
		if i := strings.IndexFunc(r.Stdout, func(c rune) bool { return c < 0x20 && c != '\n' || c >= 0x7f && c <= 0x9f || c == 0x202e }); i >= 0 {
			t.Errorf("%v: raw control at %d: %q", args, i, r.Stdout)
		}
		if len(r.Stdout) > 20000 {
			t.Errorf("%v: %d bytes printed", args, len(r.Stdout))
		}
	}
	tab := clitest.Run(t, nil, "streams", "--url", srv.URL(0), "--stream", key, "--entry", id, "-o", "table")
	for _, want := range []string{`STREAM ev:\x1b]52;c;aGk=\x07  ENTRY ` + id + `  2 fields`, `note\x1b[2J  \u009b31mred\u202e`, "\nbig          zzzz", "… (10MiB, first 4.0KiB shown)"} {
		if !strings.Contains(tab.Stdout, want) {
			t.Errorf("entry table lacks %q:\n%.600s", want, tab.Stdout)
		}
	}
	js := clitest.Run(t, nil, "streams", "--url", srv.URL(0), "--stream", key, "--entry", id, "-o", "json", "--max-value", "16")
	var e struct {
		Fields []struct {
			Name, Value string
			ValueBytes  int64 `json:"value_bytes"`
			Truncated   bool
		}
	}
	if err := json.Unmarshal([]byte(js.Stdout), &e); err != nil || len(e.Fields) != 2 || e.Fields[0].Value != "\u009b31mred\u202e" ||
		e.Fields[1].Value != strings.Repeat("z", 16) || e.Fields[1].ValueBytes != 10<<20 || !e.Fields[1].Truncated {
		t.Errorf("entry json: %v %+v", err, e)
	}
}
