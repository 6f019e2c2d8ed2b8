package main

import (
	"archive/tar"
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// untar writes a tar stream's folders and regular files under dir.
func untar(t *testing.T, r io.Reader, dir string) {
	t.Helper()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(path, filepath.Clean(dir)+string(filepath.Separator)) {
			t.Fatalf("tar entry %q leaves the folder", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(path, h.FileInfo().Mode().Perm())
		case tar.TypeReg:
			err = writeFile(path, tr, h.FileInfo().Mode().Perm())
		default:
			t.Fatalf("tar entry %q: unexpected type %c", h.Name, h.Typeflag)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func writeFile(path string, r io.Reader, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// imageOf reads the release's OCI layout archive back and returns the
// image of platform arch from its index, after checking the index names
// both Linux platforms.
func imageOf(t *testing.T, r *built, arch string) v1.Image {
	t.Helper()
	f, err := os.Open(r.artifact(t, "idemctl_*_oci.tar"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dir := t.TempDir()
	untar(t, f, dir)
	top, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	tm, err := top.IndexManifest()
	if err != nil || len(tm.Manifests) != 1 || tm.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != strings.TrimPrefix(r.version, "v") {
		t.Fatalf("index.json: %v, %+v: want one image index named %s", err, tm, strings.TrimPrefix(r.version, "v"))
	}
	idx, err := top.ImageIndex(tm.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	var img v1.Image
	for _, m := range im.Manifests {
		found = append(found, m.Platform.String())
		if m.Platform.OS == "linux" && m.Platform.Architecture == arch {
			if img, err = idx.Image(m.Digest); err != nil {
				t.Fatal(err)
			}
		}
	}
	if strings.Join(found, " ") != "linux/amd64 linux/arm64/v8" || img == nil {
		t.Fatalf("the image index holds %v: want linux/amd64 and linux/arm64/v8", found)
	}
	return img
}

// checkImageConfig checks what the image runs, as whom, and its labels;
// it returns the user's uid.
func checkImageConfig(t *testing.T, r *built, img v1.Image) int {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	layers, _ := img.Layers()
	c := cf.Config
	if len(layers) != 1 || c.User == "0" || c.User == "" || strings.Join(c.Entrypoint, " ") != "/usr/bin/idemctl" || strings.Join(c.Cmd, " ") != "exporter" || !cf.Created.Equal(r.time) {
		t.Errorf("image: %d layers, user %q, entrypoint %v, cmd %v, created %v: want 1 layer, a non-root user, /usr/bin/idemctl exporter, created at the commit %v",
			len(layers), c.User, c.Entrypoint, c.Cmd, cf.Created, r.time)
	}
	const k = "org.opencontainers.image."
	for key, want := range map[string]string{k + "version": r.version, k + "revision": r.revision, k + "source": sourceRepo,
		k + "licenses": "Apache-2.0", k + "created": r.time.Format(time.RFC3339)} {
		if c.Labels[key] != want {
			t.Errorf("image label %s = %q, want %q", key, c.Labels[key], want)
		}
	}
	uid, err := strconv.Atoi(c.User)
	if err != nil {
		t.Fatalf("image user %q: want a numeric uid", c.User)
	}
	return uid
}

// The image's binary, run from its unpacked root filesystem (chrooted
// there, as the image's user), serves /metrics naming the release's
// revision, against a real redis-server.
func TestImageRunsTheExporter(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test needs root: it runs the image's binary chrooted into its root filesystem as the image's user (CI runs as root)")
	}
	r := release(t)
	img := imageOf(t, r, "amd64")
	uid := checkImageConfig(t, r, img)
	rootfs := t.TempDir()
	if err := os.Chmod(rootfs, 0o755); err != nil {
		t.Fatal(err)
	}
	fs := mutate.Extract(img)
	untar(t, fs, rootfs)
	fs.Close()
	checkImageFiles(t, rootfs, uid)

	srv := redistest.Own(t)
	port, err := redistest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	var stderr strings.Builder
	cmd := &exec.Cmd{Path: "/usr/bin/idemctl", Args: []string{"idemctl", "exporter", "--url", srv.URL(0), "--preset", "atlasmart", "--listen", addr},
		Dir: "/", Env: []string{"PATH=/usr/bin"}, Stderr: &stderr,
		SysProcAttr: &syscall.SysProcAttr{Chroot: rootfs, Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}, Pdeathsig: syscall.SIGKILL}}
	if err := cmd.Start(); err != nil {
		t.Fatalf("run the image's /usr/bin/idemctl: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	metrics := scrape(t, "http://"+addr, &stderr)
	t.Logf("the image's exporter: %s", buildInfoLine(metrics))
	want := fmt.Sprintf("revision=%q", r.revision)
	if !strings.Contains(buildInfoLine(metrics), want) {
		t.Errorf("/metrics: idemctl_build_info is %q: want it to name %s", buildInfoLine(metrics), want)
	}
	if got := procUID(t, cmd.Process.Pid); got != uid {
		t.Errorf("the exporter runs as uid %d, want the image's %d", got, uid)
	}
}

// checkImageFiles checks the root filesystem names the user and holds
// the CA certificates.
func checkImageFiles(t *testing.T, rootfs string, uid int) {
	t.Helper()
	passwd, err := os.ReadFile(filepath.Join(rootfs, "etc/passwd"))
	if err != nil || !strings.Contains(string(passwd), fmt.Sprintf(":x:%d:%d:", uid, uid)) {
		t.Errorf("the image's /etc/passwd (%v): %q names no user %d", err, passwd, uid)
	}
	if fi, err := os.Stat(filepath.Join(rootfs, "etc/ssl/certs/ca-certificates.crt")); err != nil || fi.Size() < 10000 {
		t.Errorf("the image's CA certificates: %v", err)
	}
}

// scrape waits for /healthz, then returns /metrics.
func scrape(t *testing.T, base string, stderr fmt.Stringer) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatalf("/metrics: %v; the exporter's stderr: %s", err, stderr)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

func buildInfoLine(metrics string) string {
	for _, l := range strings.Split(metrics, "\n") {
		if strings.HasPrefix(l, "idemctl_build_info{") {
			return l
		}
	}
	return ""
}

// procUID is the real uid of a running process.
func procUID(t *testing.T, pid int) int {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "Uid:"); ok {
			uid, _ := strconv.Atoi(strings.Fields(rest)[0])
			return uid
		}
	}
	return -1
}
