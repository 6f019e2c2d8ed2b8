package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// The release under test is built once per test binary, from HEAD, into
// a temporary folder; IDEMCTL_RELEASE_DIST names one already built (CI
// passes the first of its two release runs) and IDEMCTL_RELEASE_AGAIN a
// second build of the same commit for the reproducibility test.
const (
	envDist  = "IDEMCTL_RELEASE_DIST"
	envAgain = "IDEMCTL_RELEASE_AGAIN"
)

// built is a release on disk and what it says it is of.
type built struct {
	dist     string
	version  string // v-prefixed
	revision string
	time     time.Time
}

var (
	shared     sync.Once
	sharedRel  *built
	sharedErr  error
	scratchDir string // removed when the tests end
)

func TestMain(m *testing.M) {
	code := m.Run()
	if scratchDir != "" {
		os.RemoveAll(scratchDir)
	}
	os.Exit(code)
}

// release is the shared release, built on first use.
func release(t *testing.T) *built {
	t.Helper()
	shared.Do(func() {
		dist := os.Getenv(envDist)
		if dist == "" {
			if dist, sharedErr = buildInScratch(t, "dist", "HEAD"); sharedErr != nil {
				return
			}
		}
		sharedRel, sharedErr = readBuilt(dist)
	})
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return sharedRel
}

// buildInScratch runs the release of commit into a folder of the tests'.
func buildInScratch(t *testing.T, name, commit string) (string, error) {
	if scratchDir == "" {
		var err error
		if scratchDir, err = os.MkdirTemp("", "idemctl-release-test-"); err != nil {
			return "", err
		}
	}
	dist := filepath.Join(scratchDir, name)
	t.Logf("building the release of %s into %s (set %s to reuse one)", commit, dist, envDist)
	started := time.Now()
	if _, err := build(context.Background(), ".", options{Commit: commit, Out: dist}, testLog{t}); err != nil {
		return "", fmt.Errorf("the release: %w", err)
	}
	t.Logf("release built in %s", time.Since(started).Round(time.Second))
	return dist, nil
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// readBuilt reads what a release is of from its linux/amd64 SBOM.
func readBuilt(dist string) (*built, error) {
	files, _ := filepath.Glob(filepath.Join(dist, "idemctl_*_linux_amd64.cdx.json"))
	if len(files) != 1 {
		return nil, fmt.Errorf("%s holds no release (no idemctl_*_linux_amd64.cdx.json): run go run ./release -out %s", dist, dist)
	}
	var bom cdxBOM
	if err := readJSON(files[0], &bom); err != nil {
		return nil, err
	}
	b := &built{dist: dist, version: bom.Metadata.Component.Version}
	for _, p := range bom.Metadata.Component.Properties {
		if p.Name == "idemctl:revision" {
			b.revision = p.Value
		}
	}
	var err error
	b.time, err = time.Parse(time.RFC3339, bom.Metadata.Timestamp)
	return b, err
}

func readJSON(path string, v any) error {
	body, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// artifact is the one file of the release whose name matches glob.
func (b *built) artifact(t *testing.T, glob string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(b.dist, glob))
	if len(m) != 1 {
		t.Fatalf("%s: want one artifact named %s, found %v", b.dist, glob, m)
	}
	return m[0]
}

// base is an artifact's name without extension for platform p.
func (b *built) base(p platform) string {
	return "idemctl_" + strings.TrimPrefix(b.version, "v") + "_" + p.OS + "_" + p.Arch
}

// sortedKeys are a map's keys, sorted.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

var _ io.Writer = testLog{}
