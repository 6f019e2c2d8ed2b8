package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// result is a finished release: where, of what, and what it holds.
type result struct {
	dist      string
	src       source
	artifacts []string // file names in dist, SHA256SUMS last
	modules   map[platform]int
}

// options are a release's: the commit, the version it carries, where.
type options struct{ Commit, Version, Out string }

// build makes the release of a commit of repo in o.Out, logging each step.
func build(ctx context.Context, repo string, o options, log io.Writer) (*result, error) {
	top, err := git(repo, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("not in a git checkout: %w", err)
	}
	src, err := readSource(top, o.Commit, o.Version)
	if err != nil {
		return nil, err
	}
	if head, _ := git(top, "rev-parse", "HEAD"); head == src.Revision && dirty(top) {
		fmt.Fprintf(log, "release: the working tree has uncommitted changes: the release is of commit %s only\n", src.Revision[:12])
	}
	out := o.Out
	if err := emptyDist(out); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "idemctl-release-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	s := &steps{ctx: ctx, log: log, src: src, dist: out, work: work, repo: top, tree: filepath.Join(work, "src"),
		bins: map[platform]string{}, res: &result{dist: out, src: src, modules: map[platform]int{}}}
	for _, step := range []struct {
		what string
		run  func() error
	}{
		{"export " + src.Revision[:12], s.export}, {"build 5 binaries", s.binaries}, {"man pages and completions", s.pages},
		{"archives and SBOMs", s.archives}, {"deb and rpm packages", s.packages}, {"OCI image", s.image},
		{"SHA256SUMS", s.checksums},
	} {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t := time.Now()
		if err := step.run(); err != nil {
			return nil, err
		}
		fmt.Fprintf(log, "release: %-26s %5.1fs\n", step.what, time.Since(t).Seconds())
	}
	return s.res, nil
}

// emptyDist makes out an empty folder; it refuses to empty a folder that
// holds anything but an earlier release (no SHA256SUMS there).
func emptyDist(out string) error {
	ents, err := os.ReadDir(out)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	if len(ents) > 0 {
		if _, err := os.Stat(filepath.Join(out, "SHA256SUMS")); err != nil {
			return fmt.Errorf("-out %s is not empty and holds no earlier release (no SHA256SUMS): give an empty or new folder", out)
		}
		if err := os.RemoveAll(out); err != nil {
			return err
		}
	}
	return os.MkdirAll(out, 0o755)
}

// goEnv is one go env variable, as the go command in dir sees it.
func goEnv(dir, name string) (string, error) {
	cmd := exec.Command("go", "env", name)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		return "", fmt.Errorf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// summary prints each artifact and its size.
func (r *result) summary(w io.Writer) {
	for _, a := range r.artifacts {
		if fi, err := os.Stat(filepath.Join(r.dist, a)); err == nil {
			fmt.Fprintf(w, "%10.1f MiB  %s\n", float64(fi.Size())/(1<<20), a)
		}
	}
	for _, p := range platforms {
		fmt.Fprintf(w, "%s links %d modules (and the standard library)\n", p, r.modules[p])
	}
}
