package main

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's non-root user, as distroless names its nonroot one.
const (
	imageUID   = 65532
	imageUser  = "idemctl"
	caBundle   = "/etc/ssl/certs/ca-certificates.crt" // Debian's ca-certificates, on the build machine
	sourceRepo = "https://github.com/idemctl/idemctl"
)

// imageFiles are the root filesystem of the image: the static binary,
// the CA certificates, and passwd/group naming the non-root user.
func imageFiles(bin string) ([]entry, error) {
	exe, err := fileEntry("usr/bin/idemctl", bin, 0o755)
	if err != nil {
		return nil, err
	}
	ca, err := fileEntry(caBundle[1:], caBundle, 0o644)
	if err != nil {
		return nil, fmt.Errorf("CA certificates for the image: %w (install Debian's ca-certificates)", err)
	}
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\n%s:x:%d:%d:%s:/nonexistent:/sbin/nologin\n", imageUser, imageUID, imageUID, imageUser)
	group := fmt.Sprintf("root:x:0:\n%s:x:%d:\n", imageUser, imageUID)
	return []entry{exe, ca,
		{Name: "etc/passwd", Mode: 0o644, Body: []byte(passwd)},
		{Name: "etc/group", Mode: 0o644, Body: []byte(group)},
	}, nil
}

// platformImage is the single-layer image of one Linux platform.
func platformImage(src source, p platform, bin string) (v1.Image, error) {
	files, err := imageFiles(bin)
	if err != nil {
		return nil, err
	}
	layerTar, err := tarGz(files, src.Time)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	created := v1.Time{Time: src.Time}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, MediaType: types.OCILayer,
		History: v1.History{Created: created, CreatedBy: "go run ./release", Comment: "idemctl " + src.Version}})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Created, cf.OS, cf.Architecture, cf.Variant = created, p.OS, p.Arch, variant(p)
	cf.Config.User = fmt.Sprint(imageUID)
	cf.Config.Entrypoint = []string{"/usr/bin/idemctl"}
	cf.Config.Cmd = []string{"exporter"}
	cf.Config.Env = []string{"PATH=/usr/bin"}
	cf.Config.WorkingDir = "/"
	cf.Config.ExposedPorts = map[string]struct{}{"9481/tcp": {}}
	cf.Config.Labels = imageLabels(src)
	return mutate.ConfigFile(img, cf)
}

func variant(p platform) string {
	if p.Arch == "arm64" {
		return "v8"
	}
	return ""
}

// imageLabels are the org.opencontainers.image.* annotations.
func imageLabels(src source) map[string]string {
	const k = "org.opencontainers.image."
	return map[string]string{
		k + "title": "idemctl", k + "description": "idemctl: Redis-backed idempotency records; runs the Prometheus exporter by default",
		k + "version": src.Version, k + "revision": src.Revision, k + "created": src.Date(),
		k + "source": sourceRepo, k + "url": sourceRepo, k + "documentation": sourceRepo + "/blob/main/docs/exporter.md",
		k + "licenses": "Apache-2.0", k + "vendor": "idemctl",
	}
}

// imageIndex is the image of every Linux platform, bins by platform.
func imageIndex(src source, bins map[platform]string) (v1.ImageIndex, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range platforms {
		if p.OS != "linux" {
			continue
		}
		img, err := platformImage(src, p, bins[p])
		if err != nil {
			return nil, fmt.Errorf("image for %s: %w", p, err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: p.OS, Architecture: p.Arch, Variant: variant(p)}}})
	}
	return idx, nil
}

// ociArchive is the image index as an OCI image layout (index.json
// naming it by its version), tarred: dist/idemctl_<version>_oci.tar.
func ociArchive(src source, bins map[platform]string, work string) ([]byte, error) {
	idx, err := imageIndex(src, bins)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(work, "oci")
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return nil, err
	}
	ref := map[string]string{"org.opencontainers.image.ref.name": strings.TrimPrefix(src.Version, "v")}
	if err := p.AppendIndex(idx, layout.WithAnnotations(ref)); err != nil {
		return nil, fmt.Errorf("write the OCI layout: %w", err)
	}
	var files []entry
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		e, err := fileEntry(filepath.ToSlash(rel), path, 0o644)
		files = append(files, e)
		return err
	})
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	err = writeTar(&buf, files, src.Time)
	return buf.Bytes(), err
}
