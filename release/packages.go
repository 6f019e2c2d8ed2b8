package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/goreleaser/nfpm/v2"
	_ "github.com/goreleaser/nfpm/v2/deb" // registers the deb packager
	"github.com/goreleaser/nfpm/v2/files"
	_ "github.com/goreleaser/nfpm/v2/rpm" // registers the rpm packager
)

// Where the packages put what they hold (docs/development.md lists them).
const (
	unitPath    = "/usr/lib/systemd/system/idemctl-exporter.service"
	sysusersDst = "/usr/lib/sysusers.d/idemctl.conf"
	configPath  = "/etc/idemctl/config.yaml"
	docDir      = "/usr/share/doc/idemctl/"
	manDir      = "/usr/share/man/man1/"
)

// completionPaths are where each shell's completion loader looks for a
// package's completions.
var completionPaths = map[string]string{
	"bash": "/usr/share/bash-completion/completions/idemctl",
	"zsh":  "/usr/share/zsh/vendor-completions/_idemctl",
	"fish": "/usr/share/fish/vendor_completions.d/idemctl.fish",
}

// staged is what a package holds, written out for nfpm to read: package
// path → file on disk and mode.
type staged struct {
	dst, src string
	mode     os.FileMode
	typ      string
}

// packageContents stages the files of a Linux package in dir.
func packageContents(tree, dir, bin string, d docs, licenses []byte) ([]staged, error) {
	out := []staged{
		{dst: "/usr/bin/idemctl", src: bin, mode: 0o755},
		{dst: unitPath, src: filepath.Join(tree, "packaging/idemctl-exporter.service"), mode: 0o644},
		{dst: sysusersDst, src: filepath.Join(tree, "packaging/sysusers.conf"), mode: 0o644},
		{dst: configPath, src: filepath.Join(tree, "packaging/config.yaml"), mode: 0o644, typ: files.TypeConfigNoReplace},
		{dst: docDir + "config.example.yaml", src: filepath.Join(tree, "config.example.yaml"), mode: 0o644},
		{dst: docDir + "README.md", src: filepath.Join(tree, "README.md"), mode: 0o644},
		{dst: docDir + "LICENSE", src: filepath.Join(tree, "LICENSE"), mode: 0o644},
	}
	write := func(dst string, body []byte) error {
		src := filepath.Join(dir, filepath.FromSlash(dst))
		if err := os.MkdirAll(filepath.Dir(src), 0o755); err != nil {
			return err
		}
		out = append(out, staged{dst: dst, src: src, mode: 0o644})
		return os.WriteFile(src, body, 0o644)
	}
	if err := write(docDir+"THIRD_PARTY_LICENSES", licenses); err != nil {
		return nil, err
	}
	for _, name := range d.manNames() {
		gz, err := gzipBytes(d.Man[name])
		if err != nil {
			return nil, err
		}
		if err := write(manDir+name+".gz", gz); err != nil {
			return nil, err
		}
	}
	for _, sh := range []string{"bash", "zsh", "fish"} {
		if err := write(completionPaths[sh], d.Completions[sh]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// packageInfo is nfpm's description of the idemctl package for arch.
func packageInfo(tree string, src source, arch string, contents []staged) *nfpm.Info {
	info := &nfpm.Info{
		Name: "idemctl", Arch: arch, Platform: "linux", Version: src.Version, Release: "1",
		Section: "admin", Priority: "optional", Maintainer: "idemctl maintainers <idemctl@users.noreply.github.com>",
		Description: "Inspect, triage and repair Redis-backed idempotency records\n" +
			"The on-call engineer's tool for Redis-backed idempotency records: finds\n" +
			"stuck, expired and conflicting records, repairs them with audited\n" +
			"compare-and-set writes, and exports Prometheus metrics (idemctl-exporter.service).",
		Vendor: "idemctl", Homepage: "https://github.com/idemctl/idemctl", License: "Apache-2.0",
		MTime: src.Time,
	}
	info.Umask = 0o022
	info.RPM.BuildHost = "idemctl-release" // never the build machine's name
	info.RPM.Group = "Applications/System"
	info.Scripts = nfpm.Scripts{
		PostInstall: filepath.Join(tree, "packaging/postinstall.sh"),
		PreRemove:   filepath.Join(tree, "packaging/preremove.sh"),
		PostRemove:  filepath.Join(tree, "packaging/postremove.sh"),
	}
	for _, c := range contents {
		info.Contents = append(info.Contents, &files.Content{Source: c.src, Destination: c.dst, Type: c.typ,
			FileInfo: &files.ContentFileInfo{Owner: "root", Group: "root", Mode: c.mode, MTime: src.Time}})
	}
	return nfpm.WithDefaults(info)
}

// buildPackage writes the deb or rpm of arch into dist; its file name.
func buildPackage(format, tree, dist string, src source, arch string, contents []staged) (string, error) {
	pkgr, err := nfpm.Get(format)
	if err != nil {
		return "", err
	}
	info := packageInfo(tree, src, arch, contents)
	name := pkgr.ConventionalFileName(info)
	var buf bytes.Buffer
	if err := pkgr.Package(packageInfo(tree, src, arch, contents), &buf); err != nil {
		return "", fmt.Errorf("%s for %s: %w", format, arch, err)
	}
	return name, os.WriteFile(filepath.Join(dist, name), buf.Bytes(), 0o644)
}
