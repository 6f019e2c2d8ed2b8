// Command release builds idemctl's release of a commit (HEAD) into
// a folder (dist/ by default), reproducibly: the same commit gives the
// same bytes, whoever builds it and whenever.
//
//	go run ./release [-out dist] [-version vX.Y.Z] [-commit HEAD]
//
// It writes, for linux/amd64, linux/arm64, darwin/amd64, darwin/arm64 and
// windows/amd64, a static binary in an archive (.tar.gz; .zip for
// Windows) with README.md, LICENSE, THIRD_PARTY_LICENSES,
// config.example.yaml, the man pages and the shell completions, and a
// CycloneDX SBOM beside it; .deb and .rpm packages for Linux (nfpm); an
// OCI image index for linux/amd64 and linux/arm64 as an OCI layout
// archive (go-containerregistry, no container daemon); and SHA256SUMS.
// The network is used only by the go command, for the module proxy.
//
// Floor 6 of ARCHITECTURE.md, a program: it imports no idemctl package;
// it builds and runs the idemctl binary of the commit it releases.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"
)

func main() {
	out := flag.String("out", "dist", "folder to write the release into (emptied first; must be empty or hold an earlier release)")
	version := flag.String("version", "", "the release's version, vX.Y.Z (default: the commit's vX.Y.Z tag, else v0.0.0-<commit time>-<revision>)")
	commit := flag.String("commit", "HEAD", "the commit to release (its committed tree only; the working tree is not read)")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: go run ./release [-out dist] [-version vX.Y.Z] [-commit HEAD]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	started := time.Now()
	r, err := build(ctx, ".", options{Commit: *commit, Version: *version, Out: *out}, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
	r.summary(os.Stdout)
	fmt.Fprintf(os.Stdout, "release %s of %s in %s, %s\n", r.src.Version, r.src.Revision, *out, time.Since(started).Round(time.Second))
}
