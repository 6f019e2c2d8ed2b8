package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// archived is one file or folder read back from an archive.
type archived struct {
	mode     os.FileMode
	mtime    time.Time
	uid, gid int
	body     []byte
}

// readArchive reads a release .tar.gz or .zip: entry name → what it holds.
func readArchive(t *testing.T, path string) map[string]archived {
	t.Helper()
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]archived{}
	if strings.HasSuffix(path, ".zip") {
		zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(rc)
			rc.Close()
			out[f.Name] = archived{mode: f.Mode(), mtime: f.Modified, body: b}
		}
		return out
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "" || !zr.ModTime.IsZero() {
		t.Errorf("%s: the gzip header names %q, time %v: want neither", filepath.Base(path), zr.Name, zr.ModTime)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		out[h.Name] = archived{mode: h.FileInfo().Mode(), mtime: h.ModTime, uid: h.Uid, gid: h.Gid, body: b}
	}
}

// Each platform's archive holds the binary, the docs, the licenses, the
// man pages and completions, under one folder, with the commit's time,
// owner root and fixed modes.
func TestArchivesHoldTheRelease(t *testing.T) {
	r := release(t)
	for _, p := range platforms {
		ext := ".tar.gz"
		if p.OS == "windows" {
			ext = ".zip"
		}
		name := r.base(p) + ext
		files := readArchive(t, filepath.Join(r.dist, name))
		dir := r.base(p) + "/"
		want := []string{p.exe(), "README.md", "LICENSE", "THIRD_PARTY_LICENSES", "config.example.yaml",
			"man/man1/idemctl.1", "man/man1/idemctl-exporter.1", "man/man1/idemctl-scan.1",
			"completions/idemctl.bash", "completions/_idemctl", "completions/idemctl.fish", "completions/idemctl.ps1"}
		for _, w := range want {
			if _, ok := files[dir+w]; !ok {
				t.Errorf("%s: no %s", name, dir+w)
			}
		}
		for _, n := range sortedKeys(files) {
			f := files[n]
			wantMode := os.FileMode(0o644)
			switch {
			case strings.HasSuffix(n, "/"):
				wantMode = os.ModeDir | 0o755
			case n == dir+p.exe():
				wantMode = 0o755
			}
			if !strings.HasPrefix(n, dir) || f.mode != wantMode || !f.mtime.Equal(r.time) || f.uid != 0 || f.gid != 0 {
				t.Errorf("%s: %s mode %v, mtime %v, owner %d:%d; want under %s, mode %v, the commit's time %v, owner 0:0",
					name, n, f.mode, f.mtime, f.uid, f.gid, dir, wantMode, r.time)
			}
		}
		checkBinary(t, r, p, files[dir+p.exe()].body, files[dir+"THIRD_PARTY_LICENSES"].body)
	}
}

// checkBinary checks one platform's binary: built static and stamped as
// the release says, and every module it links in THIRD_PARTY_LICENSES
// and in the SBOM beside the archive.
func checkBinary(t *testing.T, r *built, p platform, bin, licenses []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), p.exe())
	if err := os.WriteFile(path, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if settings["CGO_ENABLED"] != "0" || settings["-trimpath"] != "true" || settings["GOOS"] != p.OS || settings["GOARCH"] != p.Arch {
		t.Errorf("%s: built with %v: want CGO_ENABLED=0, -trimpath, GOOS/GOARCH %s", p, settings, p)
	}
	// -trimpath keeps -ldflags out of the build info: the values set are
	// in the binary's data.
	for _, v := range []string{r.version, r.revision, r.time.Format(time.RFC3339)} {
		if !bytes.Contains(bin, []byte(v)) {
			t.Errorf("%s: the binary does not carry %q (set by -ldflags -X)", p, v)
		}
	}
	if p.OS == "linux" {
		checkStatic(t, p, path)
	}
	var bom cdxBOM
	if err := readJSON(filepath.Join(r.dist, r.base(p)+".cdx.json"), &bom); err != nil {
		t.Fatal(err)
	}
	purls := map[string]bool{}
	for _, c := range bom.Components {
		purls[c.PURL] = true
	}
	for _, d := range bi.Deps {
		m := moduleOf(d)
		if !bytes.Contains(licenses, []byte("\n"+m.Path+" "+m.Version+"\n")) {
			t.Errorf("%s: THIRD_PARTY_LICENSES has no section for %s %s", p, m.Path, m.Version)
		}
		if !purls[purl(m.Path, m.Version)] {
			t.Errorf("%s: the SBOM lists no %s", p, purl(m.Path, m.Version))
		}
	}
	if len(bom.Components) != len(bi.Deps)+1 || bom.SpecVersion != "1.5" || bom.SerialNumber != serialFor(source{Revision: r.revision}, p) {
		t.Errorf("%s: SBOM spec %s, serial %s, %d components: want 1.5, derived from the commit, %d modules and the standard library",
			p, bom.SpecVersion, bom.SerialNumber, len(bom.Components), len(bi.Deps))
	}
}

// checkStatic fails when a Linux binary asks for a dynamic loader.
func checkStatic(t *testing.T, p platform, path string) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			t.Errorf("%s: the binary is dynamically linked (it has a PT_INTERP)", p)
		}
	}
}

// The host's binary says which build it is: the release's version,
// revision and commit time.
func TestBinaryNamesItsBuild(t *testing.T) {
	r := release(t)
	host := platform{OS: "linux", Arch: "amd64"}
	files := readArchive(t, r.artifact(t, r.base(host)+".tar.gz"))
	bin := filepath.Join(t.TempDir(), "idemctl")
	if err := os.WriteFile(bin, files[r.base(host)+"/idemctl"].body, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "version").CombinedOutput()
	want := fmt.Sprintf("idemctl %s (revision %s, built %s", r.version, r.revision, r.time.Format(time.RFC3339))
	if err != nil || !strings.HasPrefix(string(out), want) {
		t.Errorf("idemctl version: %v\n%s\nwant it to start %q", err, out, want)
	}
}

// SHA256SUMS lists every artifact with its digest, and nothing else.
func TestChecksumsListEveryArtifact(t *testing.T) {
	r := release(t)
	sums, err := os.ReadFile(filepath.Join(r.dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(string(sums), "\n"), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q: want <sha256>  <name>", line)
		}
		listed[name] = sum
	}
	ents, _ := os.ReadDir(r.dist)
	for _, e := range ents {
		if e.Name() == "SHA256SUMS" {
			continue
		}
		body, err := os.ReadFile(filepath.Join(r.dist, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%x", sha256.Sum256(body)); listed[e.Name()] != got {
			t.Errorf("SHA256SUMS: %s listed as %q, is %s", e.Name(), listed[e.Name()], got)
		}
		delete(listed, e.Name())
	}
	if len(listed) > 0 || len(ents) != 16 {
		t.Errorf("SHA256SUMS lists %v that dist lacks; dist holds %d files, want 16 (5 archives, 5 SBOMs, 2 deb, 2 rpm, the image, SHA256SUMS)", sortedKeys(listed), len(ents))
	}
}

// Two releases of the same commit are the same bytes.
func TestReleaseIsReproducible(t *testing.T) {
	r := release(t)
	again := os.Getenv(envAgain)
	if again == "" {
		var err error
		if again, err = buildInScratch(t, "again", r.revision); err != nil {
			t.Fatal(err)
		}
	}
	a, errA := os.ReadFile(filepath.Join(r.dist, "SHA256SUMS"))
	b, errB := os.ReadFile(filepath.Join(again, "SHA256SUMS"))
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("two releases of %s differ:\n%s\nagain (%s):\n%s", r.revision, a, again, b)
	}
}
