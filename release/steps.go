package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

// steps holds a release in the making.
type steps struct {
	ctx              context.Context
	log              io.Writer
	src              source
	dist, work, tree string
	repo             string
	modcache, goroot string
	bins             map[platform]string
	licenses         map[platform][]byte
	docs             docs
	res              *result
}

func (s *steps) export() error {
	if err := os.MkdirAll(s.tree, 0o755); err != nil {
		return err
	}
	if err := exportTree(s.repo, s.src.Revision, s.tree); err != nil {
		return err
	}
	var err error
	if s.modcache, err = goEnv(s.tree, "GOMODCACHE"); err != nil {
		return err
	}
	s.goroot, err = goEnv(s.tree, "GOROOT")
	return err
}

// binaries builds each platform's binary once and reads from it the
// modules it links: its THIRD_PARTY_LICENSES and SBOM follow from them.
func (s *steps) binaries() error {
	s.licenses = map[platform][]byte{}
	for _, p := range platforms {
		if err := s.ctx.Err(); err != nil {
			return err
		}
		bin, err := buildBinary(s.tree, s.work, s.src, p)
		if err != nil {
			return err
		}
		s.bins[p] = bin
		goVersion, mods, err := linkedModules(bin)
		if err != nil {
			return err
		}
		if s.licenses[p], err = thirdPartyLicenses(s.modcache, s.goroot, goVersion, mods); err != nil {
			return fmt.Errorf("THIRD_PARTY_LICENSES for %s: %w", p, err)
		}
		bom, err := sbom(s.src, p, goVersion, mods)
		if err != nil {
			return err
		}
		s.res.modules[p] = len(mods)
		if err := s.write(s.base(p)+".cdx.json", bom); err != nil {
			return err
		}
	}
	return nil
}

// docs runs the binary of the machine's own platform (built for it when
// the release ships none) for the man pages and completions.
func (s *steps) pages() error {
	host := platform{runtime.GOOS, runtime.GOARCH}
	bin, ok := s.bins[host]
	if !ok {
		var err error
		if bin, err = buildBinary(s.tree, filepath.Join(s.work, "host"), s.src, host); err != nil {
			return err
		}
	}
	var err error
	s.docs, err = generateDocs(bin, s.work)
	return err
}

// base is an artifact's name without extension: idemctl_1.2.3_linux_amd64.
func (s *steps) base(p platform) string {
	return "idemctl_" + strings.TrimPrefix(s.src.Version, "v") + "_" + p.OS + "_" + p.Arch
}

func (s *steps) archives() error {
	for _, p := range platforms {
		files, err := s.archiveFiles(p)
		if err != nil {
			return err
		}
		name, body := s.base(p)+".tar.gz", []byte(nil)
		if p.OS == "windows" {
			name = s.base(p) + ".zip"
			body, err = zipOf(files, s.src.Time)
		} else {
			body, err = tarGz(files, s.src.Time)
		}
		if err != nil {
			return err
		}
		if err := s.write(name, body); err != nil {
			return err
		}
	}
	return nil
}

// archiveFiles are the files of p's archive, under one folder named as
// the archive.
func (s *steps) archiveFiles(p platform) ([]entry, error) {
	dir := s.base(p) + "/"
	bin, err := fileEntry(dir+p.exe(), s.bins[p], 0o755)
	if err != nil {
		return nil, err
	}
	files := []entry{bin, {Name: dir + "THIRD_PARTY_LICENSES", Mode: 0o644, Body: s.licenses[p]}}
	for _, f := range []string{"README.md", "LICENSE", "config.example.yaml"} {
		e, err := fileEntry(dir+f, filepath.Join(s.tree, f), 0o644)
		if err != nil {
			return nil, err
		}
		files = append(files, e)
	}
	for _, n := range s.docs.manNames() {
		files = append(files, entry{Name: dir + "man/man1/" + n, Mode: 0o644, Body: s.docs.Man[n]})
	}
	for sh, name := range archiveCompletions {
		files = append(files, entry{Name: dir + "completions/" + name, Mode: 0o644, Body: s.docs.Completions[sh]})
	}
	return files, nil
}

// archiveCompletions name each shell's completion in an archive.
var archiveCompletions = map[string]string{
	"bash": "idemctl.bash", "zsh": "_idemctl", "fish": "idemctl.fish", "powershell": "idemctl.ps1",
}

func (s *steps) packages() error {
	for _, p := range platforms {
		if p.OS != "linux" {
			continue
		}
		contents, err := packageContents(s.tree, filepath.Join(s.work, "pkg_"+p.Arch), s.bins[p], s.docs, s.licenses[p])
		if err != nil {
			return err
		}
		for _, format := range []string{"deb", "rpm"} {
			name, err := buildPackage(format, s.tree, s.dist, s.src, p.Arch, contents)
			if err != nil {
				return err
			}
			s.res.artifacts = append(s.res.artifacts, name)
		}
	}
	return nil
}

func (s *steps) image() error {
	body, err := ociArchive(s.src, s.bins, s.work)
	if err != nil {
		return err
	}
	return s.write("idemctl_"+strings.TrimPrefix(s.src.Version, "v")+"_oci.tar", body)
}

// checksums writes SHA256SUMS: every artifact, by name, as sha256sum -c
// reads it.
func (s *steps) checksums() error {
	names := append([]string(nil), s.res.artifacts...)
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		body, err := os.ReadFile(filepath.Join(s.dist, n))
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%x  %s\n", sha256.Sum256(body), n)
	}
	s.res.artifacts = append(names, "SHA256SUMS")
	return os.WriteFile(filepath.Join(s.dist, "SHA256SUMS"), []byte(b.String()), 0o644)
}

// write puts an artifact into dist.
func (s *steps) write(name string, body []byte) error {
	s.res.artifacts = append(s.res.artifacts, name)
	return os.WriteFile(filepath.Join(s.dist, name), body, 0o644)
}
