// Package buildinfo says which build of idemctl is running: its version,
// the commit it was built from, whether the tree had changes, and when,
// so an operator can tell at 3 a.m. which build answered.
//
// A release build sets the three by -ldflags -X (see release/); otherwise
// they come from what the go command embedded (runtime/debug.ReadBuildInfo:
// the module version for go install, the VCS stamp for go build in a
// checkout). Floor 0 of ARCHITECTURE.md: it imports nothing of idemctl's.
package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Set by the release build:
//
//	-ldflags "-X github.com/idemctl/idemctl/internal/buildinfo.version=v1.2.3
//	          -X github.com/idemctl/idemctl/internal/buildinfo.revision=<sha>
//	          -X github.com/idemctl/idemctl/internal/buildinfo.date=<RFC 3339>"
var version, revision, date string

// Info is one build's identity. Fields unknown are empty.
type Info struct {
	Version  string `json:"version"`            // "dev" when none is known
	Revision string `json:"revision,omitempty"` // the VCS commit
	Modified bool   `json:"modified"`           // the tree had uncommitted changes
	Time     string `json:"build_time,omitempty"`
	Go       string `json:"go"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
	// Known is false for a build that carries none of version, revision
	// or time (go run, go test, -buildvcs=false).
	Known bool `json:"known"`
}

// Read is this build's Info.
func Read() Info {
	bi, _ := debug.ReadBuildInfo()
	return fromBuild(bi, version, revision, date)
}

// fromBuild fills an Info from the embedded build info, the linker's
// values first.
func fromBuild(bi *debug.BuildInfo, ver, rev, at string) Info {
	in := Info{Version: ver, Revision: rev, Time: at, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if bi != nil {
		if in.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			in.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && in.Revision == "":
				in.Revision = s.Value
			case s.Key == "vcs.time" && in.Time == "":
				in.Time = s.Value
			case s.Key == "vcs.modified" && rev == "":
				in.Modified = s.Value == "true"
			}
		}
	}
	// A version such as v0.0.0-…+dirty says modified too.
	if strings.HasSuffix(in.Version, "+dirty") {
		in.Modified = true
	}
	in.Known = in.Version != "" || in.Revision != "" || in.Time != ""
	if in.Version == "" {
		in.Version = "dev"
	}
	return in
}

// Short is the version and, when known, the commit's first 12 characters:
// "v1.2.3", "dev (a1b2c3d4e5f6, modified)".
func (in Info) Short() string {
	s := in.Version
	if in.Revision != "" && !strings.Contains(in.Version, shortRev(in.Revision)) {
		s += " (" + shortRev(in.Revision)
		if in.Modified {
			s += ", modified"
		}
		s += ")"
	}
	return s
}

func shortRev(r string) string { return r[:min(len(r), 12)] }

// Line is version's one line: what was built, from what, when, and with
// which Go; for an unknown build it says so and why.
func (in Info) Line() string {
	if !in.Known {
		return "idemctl dev (no version, revision or build time known: built by go run or go test, or with -buildvcs=false; " +
			in.Go + " " + in.OS + "/" + in.Arch + ")"
	}
	var parts []string
	if in.Revision != "" {
		r := "revision " + in.Revision
		if in.Modified {
			r += " (modified)"
		}
		parts = append(parts, r)
	}
	if in.Time != "" {
		parts = append(parts, "built "+in.Time)
	}
	parts = append(parts, in.Go+" "+in.OS+"/"+in.Arch)
	return "idemctl " + in.Version + " (" + strings.Join(parts, ", ") + ")"
}
