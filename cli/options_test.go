package cli

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/config"
	"github.com/idemctl/idemctl/inspect"
)

// parse runs an idemctl command line as far as the command's run — flags
// parsed, IDEMCTL_… applied, which were given resolved — and hands back
// the options it would run with (gh's runF): no server, no connection.
func parse[T command](t *testing.T, env map[string]string, args ...string) T {
	t.Helper()
	var got command
	var stderr strings.Builder
	a := newApp(IO{Stderr: &stderr, Getenv: func(k string) string { return env[k] }})
	a.runF = func(cmd command, _ []string) error { got = cmd; return nil }
	if code := a.run(context.Background(), args); code != ExitOK {
		t.Fatalf("idemctl %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
	}
	o, ok := got.(T)
	if !ok {
		t.Fatalf("idemctl %s ran %T", strings.Join(args, " "), got)
	}
	return o
}

// A write's flags land in its options as given: --write set or not, --ttl
// given or left to the action's default, --response given even empty, and
// every flag given kept for the exact command printed without a terminal.
func TestWriteFlagsBecomeOptions(t *testing.T) {
	o := parse[*actionCmd](t, nil, "fail", "k", "--reason", "stuck")
	if o.wf.write || o.wf.given.ttl || o.wf.ttl != "retention" || o.wf.given.response || o.wf.rate != 50 {
		t.Errorf("defaults: write %v, ttl %q given %v, response given %v, rate %d", o.wf.write, o.wf.ttl, o.wf.given.ttl, o.wf.given.response, o.wf.rate)
	}
	o = parse[*actionCmd](t, nil, "fail", "k", "--reason", "stuck", "--write", "--ttl", "keep", "--response", "", "--keyspace", "a,b")
	if !o.wf.write || !o.wf.given.ttl || o.wf.ttl != "keep" || !o.wf.given.response {
		t.Errorf("given: write %v, ttl %q given %v, response given %v", o.wf.write, o.wf.ttl, o.wf.given.ttl, o.wf.given.response)
	}
	var names []string
	for _, f := range o.wf.line {
		names = append(names, f.name)
	}
	if want := []string{"reason", "write", "ttl", "response", "keyspace"}; !slices.Equal(names, want) {
		t.Errorf("flags given %v, want %v in the order given", names, want)
	}
	s := &session{profile: &config.Profile{}}
	var b strings.Builder
	writeFlagsLine(&b, "fail", o.wf.line, s)
	if want := "  idemctl fail --reason 'stuck' --write --ttl 'keep' --response '' --keyspace 'a' --keyspace 'b'"; b.String() != want {
		t.Errorf("command line\n%s\nwant\n%s", b.String(), want)
	}
}

// A scan flag given wins over the profile's scan: section, a default
// yields to it; an IDEMCTL_… variable counts as the flag given, over the
// profile too. Resolved without a server: the session is not dialled.
func TestFlagsOverProfileInOptions(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	doc := "profiles:\n  p:\n    url: redis://127.0.0.1:1/0\n    dial_timeout: 1s\n    scan:\n      count: 500\n      max_nodes: 2\n" +
		"keyspaces:\n  - name: orders\n    preset: atlasmart\n    retention: 1h\n"
	if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	open := func(o *scanCmd, env map[string]string) *session {
		t.Helper()
		a := newApp(IO{Getenv: func(k string) string { return env[k] }})
		sp := o.spec(keyspacesRequired)
		sp.dial = false
		s, err := a.openSession(context.Background(), sp)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	o := parse[*scanCmd](t, nil, "scan", "--config", cfg, "--profile", "p")
	if o.sf.given.count || o.sf.count != inspect.DefaultScanCount || o.cf.dialTimeoutGiven || o.kf.given.retention {
		t.Errorf("nothing given: count %d given %v, dial timeout given %v", o.sf.count, o.sf.given.count, o.cf.dialTimeoutGiven)
	}
	s := open(o, nil)
	if s.scan.Count != 500 || s.scan.MaxNodes != 2 || s.opts.DialTimeout != time.Second || s.keyspaces[0].Retention != time.Hour {
		t.Errorf("the profile's: count %d, max nodes %d, dial timeout %s, retention %s", s.scan.Count, s.scan.MaxNodes, s.opts.DialTimeout, s.keyspaces[0].Retention)
	}

	env := map[string]string{"IDEMCTL_DIAL_TIMEOUT": "3s"}
	o = parse[*scanCmd](t, env, "scan", "--config", cfg, "--profile", "p", "--count", "50", "--retention", "2h")
	if !o.sf.given.count || o.sf.count != 50 || o.sf.given.maxNodes || !o.cf.dialTimeoutGiven || !o.kf.given.retention {
		t.Errorf("given: count %d given %v, max nodes given %v, dial timeout given %v", o.sf.count, o.sf.given.count, o.sf.given.maxNodes, o.cf.dialTimeoutGiven)
	}
	s = open(o, env)
	if s.scan.Count != 50 || s.scan.MaxNodes != 2 || s.opts.DialTimeout != 3*time.Second || s.keyspaces[0].Retention != 2*time.Hour {
		t.Errorf("flags over the profile: count %d, max nodes %d, dial timeout %s, retention %s", s.scan.Count, s.scan.MaxNodes, s.opts.DialTimeout, s.keyspaces[0].Retention)
	}
}

// check judges only the thresholds given; doctor's flags given win over
// the config's doctor: section; streams' --timeout given overrides the
// keyspaces'; --at without --rdb is seen before anything opens.
func TestGivenFlagsOfOtherCommands(t *testing.T) {
	c := parse[*checkCmd](t, nil, "check", "--max-memory", "1MiB", "--max-stale", "0")
	if want := []string{"max-stale", "max-memory"}; !slices.Equal(c.maxGiven, want) || c.maxMem != 1<<20 {
		t.Errorf("thresholds given %v, want %v", c.maxGiven, want)
	}
	d := parse[*doctorCmd](t, nil, "doctor", "--require-fsync", "everysec")
	if d.retryHorizonGiven || !d.requireFsyncGiven || d.retryHorizon != 24*time.Hour {
		t.Errorf("doctor: retry horizon given %v (%s), require-fsync given %v", d.retryHorizonGiven, d.retryHorizon, d.requireFsyncGiven)
	}
	st := parse[*streamsCmd](t, nil, "streams", "--timeout", "1m")
	if !st.given.timeout || st.given.maxDeliveries || st.timeout != time.Minute {
		t.Errorf("streams: timeout given %v, max-deliveries given %v", st.given.timeout, st.given.maxDeliveries)
	}
	sc := parse[*scanCmd](t, nil, "scan", "--at", "2026-01-02T03:04:05Z", "--url", "redis://127.0.0.1:1/0")
	if !sc.snap.atGiven || sc.snap.dbGiven || sc.cf.serverFlag != "url" {
		t.Errorf("scan: --at given %v, --db given %v, server flag %q", sc.snap.atGiven, sc.snap.dbGiven, sc.cf.serverFlag)
	}
	if err := sc.snap.checkUnused(); err == nil || !strings.Contains(err.Error(), "--at is for reading a snapshot") {
		t.Errorf("--at without --rdb: %v", err)
	}
}

// Options first, kept: past registration (flags, register…) and the
// parsing steps around it, no function takes a *pflag.FlagSet, and only a
// resolveFlags method asks whether a flag was given (Changed). Everything
// else reads options.
func TestOnlyTheFlagLayerSeesTheFlagSet(t *testing.T) {
	flagLayer := map[string]bool{"flags": true, "resolveFlags": true, "selectionFlags": true, "outputFlag": true,
		"flagsGiven": true, "GroupedFlags": true, "setFlagsFromEnv": true, "checkFlagRanges": true}
	files, _ := filepath.Glob("*.go")
	subs, _ := filepath.Glob("*/*.go") // cli/docgen, cli/report: the command layer's own packages
	files = append(files, subs...)
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			layer := flagLayer[fn.Name.Name] || strings.HasPrefix(fn.Name.Name, "register")
			for _, p := range fn.Type.Params.List {
				if se, ok := p.Type.(*ast.StarExpr); ok && types.ExprString(se.X) == "pflag.FlagSet" && !layer {
					t.Errorf("%s: %s takes a *pflag.FlagSet: resolve the flags into its options instead", fset.Position(fn.Pos()), fn.Name.Name)
				}
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok {
					if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Changed" && fn.Name.Name != "resolveFlags" {
						t.Errorf("%s: %s asks whether a flag was given: only resolveFlags may", fset.Position(c.Pos()), fn.Name.Name)
					}
				}
				return true
			})
		}
	}
}
