package redistest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// ServerEnv names the server the tests run instead of the PATH's
// redis-server: a binary (redis-server, valkey-server), possibly inside a
// folder unpacked with `mmdebstrap --variant=extract` from another Debian
// release, or such a folder itself when it holds exactly one server. An
// unpacked binary runs through its own folder's dynamic loader and
// libraries, so nothing is installed system-wide.
const ServerEnv = "IDEMCTL_TEST_SERVER"

// binary is how to run the server under test.
type binary struct {
	argv    []string // the program, behind its unpacked root's loader if it has one
	Version string   // what it says of itself, e.g. "Valkey server v=8.1.1"
}

var (
	binOnce sync.Once
	bin     binary
	binErr  error
)

// serverBinary resolves the server once per test binary.
func serverBinary() (binary, error) {
	binOnce.Do(func() { bin, binErr = resolveBinary(os.Getenv(ServerEnv)) })
	return bin, binErr
}

func resolveBinary(named string) (binary, error) {
	if named == "" {
		path, err := exec.LookPath("redis-server")
		if err != nil {
			return binary{}, errors.New(InstallHint)
		}
		return versioned(binary{argv: []string{path}})
	}
	fi, err := os.Stat(named)
	if err != nil {
		return binary{}, fmt.Errorf("%s=%s: %v", ServerEnv, named, err)
	}
	path := named
	if fi.IsDir() {
		var found []string
		for _, name := range []string{"redis-server", "valkey-server"} {
			if _, err := os.Stat(filepath.Join(named, "usr/bin", name)); err == nil {
				found = append(found, filepath.Join(named, "usr/bin", name))
			}
		}
		if len(found) != 1 {
			return binary{}, fmt.Errorf("%s=%s: the folder holds %d servers (%v): name the binary, e.g. %s/usr/bin/valkey-server",
				ServerEnv, named, len(found), found, named)
		}
		path = found[0]
	}
	b := binary{argv: []string{path}}
	// DIR/usr/bin/NAME in an unpacked root: run it with DIR's loader and libraries.
	root := filepath.Dir(filepath.Dir(filepath.Dir(path)))
	loader := filepath.Join(root, "usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2")
	if _, err := os.Stat(loader); err == nil && filepath.Base(filepath.Dir(path)) == "bin" {
		libs := filepath.Join(root, "usr/lib/x86_64-linux-gnu") + ":" + filepath.Join(root, "lib/x86_64-linux-gnu")
		b.argv = []string{loader, "--library-path", libs, path}
	}
	return versioned(b)
}

// versioned asks the server what it is, which also proves it runs here.
func versioned(b binary) (binary, error) {
	out, err := b.command("--version").CombinedOutput()
	if err != nil {
		return b, fmt.Errorf("%s --version: %v: %s", strings.Join(b.argv, " "), err, strings.TrimSpace(string(out)))
	}
	v := strings.TrimSpace(string(out))
	if i := strings.Index(v, " sha="); i > 0 {
		v = v[:i]
	}
	b.Version = v
	return b, nil
}

// command runs the server with args.
func (b binary) command(args ...string) *exec.Cmd {
	return exec.Command(b.argv[0], append(append([]string{}, b.argv[1:]...), args...)...)
}

// Describe says which server the tests run, for their logs.
func Describe() string {
	b, err := serverBinary()
	if err != nil {
		return "no server: " + err.Error()
	}
	src := "redis-server from PATH"
	if v := os.Getenv(ServerEnv); v != "" {
		src = ServerEnv + "=" + v
	}
	return b.Version + " (" + src + ")"
}

// HasFieldTTL reports whether the server has hash-field TTLs (HPEXPIRE,
// Redis 7.4+); an error other than "unknown command" is returned.
func HasFieldTTL(c *redis.Client) (bool, error) {
	ctx := context.Background()
	const probe = "redistest:field-ttl-probe"
	defer c.Del(ctx, probe)
	c.HSet(ctx, probe, "f", "v")
	err := c.Do(ctx, "hpexpire", probe, 60000, "fields", 1, "f").Err()
	if err != nil && strings.Contains(strings.ToLower(err.Error()), "unknown command") {
		return false, nil
	}
	return err == nil, err
}

// RequireFieldTTL skips, saying so, a test of hash-field TTLs on a server
// that has none (Redis 7.0, Valkey 8): the feature's absence is reported,
// not hidden.
func RequireFieldTTL(t testing.TB, c *redis.Client) {
	t.Helper()
	ok, err := HasFieldTTL(c)
	if err != nil {
		t.Fatalf("HPEXPIRE probe: %v", err)
	}
	if !ok {
		t.Skipf("%s has no hash-field TTLs (HPEXPIRE): not applicable on this server", Describe())
	}
}
