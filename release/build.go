package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// platform is one GOOS/GOARCH the release ships.
type platform struct{ OS, Arch string }

// platforms are every operator's: the order is the release's.
var platforms = []platform{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"},
}

func (p platform) String() string { return p.OS + "/" + p.Arch }

// exe is the binary's file name on the platform.
func (p platform) exe() string {
	if p.OS == "windows" {
		return "idemctl.exe"
	}
	return "idemctl"
}

// host says whether the machine running the release can run p's binary.
func (p platform) host() bool { return p.OS == runtime.GOOS && p.Arch == runtime.GOARCH }

const buildinfoPkg = "github.com/idemctl/idemctl/internal/buildinfo"

// buildFlags are the go build flags of a release binary: static, no
// local paths, no VCS stamp (the tree is an export), and the identity
// buildinfo reports set by the linker.
func buildFlags(src source, out string) []string {
	ldflags := strings.Join([]string{
		"-s", "-w",
		"-X", buildinfoPkg + ".version=" + src.Version,
		"-X", buildinfoPkg + ".revision=" + src.Revision,
		"-X", buildinfoPkg + ".date=" + src.Date(),
	}, " ")
	return []string{"build", "-trimpath", "-buildvcs=false", "-ldflags=" + ldflags, "-o", out, "."}
}

// buildBinary builds the idemctl of p from the exported tree into
// work/<os>_<arch>/ and returns the binary's path.
func buildBinary(tree, work string, src source, p platform) (string, error) {
	dir := filepath.Join(work, p.OS+"_"+p.Arch)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	out := filepath.Join(dir, p.exe())
	cmd := exec.Command("go", buildFlags(src, out)...)
	cmd.Dir = tree
	// The baseline instruction sets, whatever the environment asks: the
	// same commit gives the same binary on every machine with its Go.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Arch, "GOFLAGS=-mod=readonly",
		"GOAMD64=v1", "GOARM64=v8.0", "GOEXPERIMENT=")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build for %s: %v\n%s", p, err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
