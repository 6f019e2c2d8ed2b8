package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"time"
)

// entry is one file of an archive. Dirs are implied by the files' paths
// and written before them; every entry carries the commit's time, owner
// root (uid and gid 0) and a fixed mode, so the same inputs give the same
// bytes.
type entry struct {
	Name string // slash-separated, relative
	Mode int64  // 0o644, 0o755
	Body []byte
}

// fileEntry reads a file into an entry.
func fileEntry(name, file string, mode int64) (entry, error) {
	b, err := os.ReadFile(file)
	return entry{Name: name, Mode: mode, Body: b}, err
}

// withDirs sorts the entries by name and adds each parent folder once,
// before its contents.
func withDirs(files []entry) []entry {
	seen := map[string]bool{}
	var all []entry
	for _, f := range files {
		for d := path.Dir(f.Name); d != "." && d != "/" && !seen[d]; d = path.Dir(d) {
			seen[d] = true
			all = append(all, entry{Name: d + "/", Mode: 0o755})
		}
		all = append(all, f)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	return all
}

// writeTar writes the entries (with their folders) as a tar stream.
func writeTar(w io.Writer, files []entry, mtime time.Time) error {
	tw := tar.NewWriter(w)
	for _, e := range withDirs(files) {
		h := &tar.Header{Name: e.Name, Mode: e.Mode, ModTime: mtime, Uname: "root", Gname: "root", Format: tar.FormatPAX}
		h.Typeflag, h.Size = tar.TypeReg, int64(len(e.Body))
		if strings.HasSuffix(e.Name, "/") {
			h.Typeflag, h.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(e.Body); err != nil {
			return err
		}
	}
	return tw.Close()
}

// gzipBytes compresses b with a header that names no file and no time.
func gzipBytes(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// tarGz is the entries as a .tar.gz.
func tarGz(files []entry, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	if err := writeTar(&buf, files, mtime); err != nil {
		return nil, err
	}
	return gzipBytes(buf.Bytes())
}

// zipOf is the entries as a .zip (deflated; folders as entries too).
func zipOf(files []entry, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range withDirs(files) {
		h := &zip.FileHeader{Name: e.Name, Method: zip.Deflate, Modified: mtime}
		mode := os.FileMode(e.Mode)
		if strings.HasSuffix(e.Name, "/") {
			h.Method, mode = zip.Store, mode|os.ModeDir
		}
		h.SetMode(mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(e.Body); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
