package cli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/idemctl/idemctl/cli"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/recordtest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// The suite never reads the real process environment: with a hostile HOME
// (a config whose default profile points nowhere and caps scans at 3 keys)
// and IDEMCTL_* variables set to wrong values, every command run the way
// the tests run them gives the same results. The same command run with the
// process's own I/O is derailed, which shows the hostile environment bites.
func TestSuiteIgnoresTheProcessEnvironment(t *testing.T) {
	srv := redistest.Shared(t)
	clitest.Seed(t, srv.URL(0), 200)
	key := cliKey + "-hermetic"
	recordtest.Reserve(t, srv, key, "body")
	ks := []string{"--url", srv.URL(0), "--preset", "atlasmart"}
	commands := [][]string{
		append([]string{"scan", "-o", "ndjson"}, ks...),
		append([]string{"stats", "-o", "json"}, ks...),
		append([]string{"check", "--max-stale", "100000", "--max-processing-no-ttl", "100000"}, ks...), // the seed's processing records without TTL are judged
		{"detect", "--url", srv.URL(0), "--match", "atlasmart:*"},
		append([]string{"expire", key, "--ttl", "1h", "--reason", "hermetic", "--dry-run"}, ks...),
		{"presets"},
		{"version"},
		{"config", "view"},
		{"config", "path", "-o", "json"},
	}
	home := t.TempDir()
	run := func() []string {
		var out []string
		for _, args := range commands {
			r := clitest.Run(t, map[string]string{"HOME": home}, args...)
			out = append(out, strings.Join(args[:1], " ")+": "+strconv.Itoa(r.Code)+" "+stable(args[0], r.Stdout)+" | "+stableErr(r.Stderr))
		}
		return out
	}
	clean := run()
	for i, c := range clean {
		if !strings.Contains(c, ": 0 ") {
			t.Fatalf("%s fails in a clean environment: %s", commands[i][0], c)
		}
	}

	hostile := t.TempDir()
	cfg := filepath.Join(hostile, ".config", "idemctl", "config.yaml")
	os.MkdirAll(filepath.Dir(cfg), 0o700)
	os.WriteFile(cfg, []byte("default_profile: bogus\nprofiles:\n  bogus:\n    url: redis://127.0.0.1:1/0\n    scan: {max_keys: 3}\n"), 0o600)
	for k, v := range map[string]string{
		"HOME": hostile, "XDG_CONFIG_HOME": filepath.Join(hostile, ".config"), "XDG_STATE_HOME": filepath.Join(hostile, "state"),
		"IDEMCTL_URL": "redis://127.0.0.1:1/0", "IDEMCTL_PROFILE": "bogus", "IDEMCTL_CONFIG": cfg, "IDEMCTL_PRESET": "nope",
		"IDEMCTL_MATCH": "nothing:*", "IDEMCTL_USER": "nobody", "IDEMCTL_KEYSPACE": "ghost", "IDEMCTL_DIAL_TIMEOUT": "soon",
		"USER": "hostile", "NO_COLOR": "1",
	} {
		t.Setenv(k, v)
	}
	if got := run(); strings.Join(got, "\n") != strings.Join(clean, "\n") {
		t.Fatalf("results changed with a hostile process environment:\nclean:\n%s\nhostile:\n%s", strings.Join(clean, "\n"), strings.Join(got, "\n"))
	}
	if _, err := os.Stat(filepath.Join(hostile, "state")); !os.IsNotExist(err) {
		t.Error("something wrote under the process's XDG_STATE_HOME")
	}

	// The control: the process's own I/O reads all of it, and fails.
	var out, errb bytes.Buffer
	real := cli.ProcessIO()
	real.Stdout, real.Stderr, real.Stdin = &out, &errb, strings.NewReader("")
	if code := cli.Run(t.Context(), real, commands[1]); code == cli.ExitOK {
		t.Fatalf("the hostile environment had no effect on the process's own I/O: %s", errb.String())
	}
}

// stable keeps what a command's output says about the data, dropping what
// moves on its own (TTLs, ages, durations).
func stable(cmd, stdout string) string {
	switch cmd {
	case "scan":
		var keys []string
		for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
			var rec struct {
				Key, State string
			}
			json.Unmarshal([]byte(l), &rec)
			keys = append(keys, rec.Key+"="+rec.State)
		}
		sort.Strings(keys)
		return strings.Join(keys, ",")
	case "stats":
		var st clitest.StatsOut
		json.Unmarshal([]byte(stdout), &st)
		b, _ := json.Marshal([]any{st.Total, st.ByState, st.Stale, st.Flags, st.Complete})
		return string(b)
	case "check":
		verdict, _, _ := strings.Cut(stdout, ", scanned in")
		return verdict
	case "detect": // its timing proposals are read from TTLs running down
		var keep []string
		for _, l := range strings.Split(stdout, "\n") {
			if t := strings.TrimSpace(l); !strings.HasPrefix(t, "reserve_ttl") && !strings.HasPrefix(t, "processing_timeout") && !strings.HasPrefix(t, "retention") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	return stdout
}

func stableErr(stderr string) string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "dry run:") || strings.HasPrefix(l, "idemctl") { // plans show TTLs running down
			out = append(out, l)
		}
	}
	return strings.Join(out, "; ")
}
