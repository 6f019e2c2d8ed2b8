package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// source is the commit a release is built from: its revision, its time
// (every timestamp in the release is this one, never the clock's), and
// the version the release carries.
type source struct {
	Revision string
	Time     time.Time
	Version  string
}

// semverTag is a release tag such as v1.2.3 or v1.2.3-rc.1.
var semverTag = regexp.MustCompile(`^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`)

// readSource reads commit (HEAD, a tag, a hash) of the checkout at repo.
// version "" means the commit's release tag, else a pseudo-version
// v0.0.0-YYYYMMDDhhmmss-<12 hex>, as the go command names an untagged
// commit.
func readSource(repo, commit, version string) (source, error) {
	rev, err := git(repo, "rev-parse", "--verify", commit+"^{commit}")
	if err != nil {
		return source{}, fmt.Errorf("-commit %s: no such commit", commit)
	}
	epoch, err := git(repo, "show", "-s", "--format=%ct", rev)
	if err != nil {
		return source{}, err
	}
	var sec int64
	if _, err := fmt.Sscan(epoch, &sec); err != nil {
		return source{}, fmt.Errorf("commit time %q: %w", epoch, err)
	}
	src := source{Revision: rev, Time: time.Unix(sec, 0).UTC(), Version: version}
	if src.Version == "" {
		tags, _ := git(repo, "tag", "--points-at", rev)
		for _, t := range strings.Fields(tags) {
			if semverTag.MatchString(t) {
				src.Version = t
			}
		}
	}
	if src.Version == "" {
		src.Version = "v0.0.0-" + src.Time.Format("20060102150405") + "-" + rev[:12]
	}
	if !semverTag.MatchString(src.Version) {
		return source{}, fmt.Errorf("-version %q: want vMAJOR.MINOR.PATCH, e.g. v1.2.3 or v1.2.3-rc.1", src.Version)
	}
	return src, nil
}

// Date is the commit time as the binaries carry it (RFC 3339, UTC).
func (s source) Date() string { return s.Time.Format(time.RFC3339) }

// exportTree writes the tree of rev (what is committed, nothing else)
// into dir: the release is the commit, whatever the working tree holds.
func exportTree(repo, rev, dir string) error {
	archive := exec.Command("git", "-C", repo, "archive", "--format=tar", rev)
	untar := exec.Command("tar", "-x", "-C", dir)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return err
	}
	untar.Stdin = pipe
	var errs bytes.Buffer
	archive.Stderr, untar.Stderr = &errs, &errs
	if err := untar.Start(); err != nil {
		return fmt.Errorf("export %s: %w", rev, err)
	}
	if err := archive.Run(); err != nil {
		return fmt.Errorf("git archive %s: %v: %s", rev, err, strings.TrimSpace(errs.String()))
	}
	if err := untar.Wait(); err != nil {
		return fmt.Errorf("export %s: tar: %v: %s", rev, err, strings.TrimSpace(errs.String()))
	}
	return nil
}

// dirty says whether the working tree differs from HEAD (the release
// leaves the changes out, and says so).
func dirty(repo string) bool {
	out, err := git(repo, "status", "--porcelain", "--untracked-files=no")
	return err != nil || out != ""
}

func git(repo string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}
