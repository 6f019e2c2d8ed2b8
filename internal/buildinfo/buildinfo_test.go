package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFromBuild(t *testing.T) {
	stamped := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.time", Value: "2026-12-07T19:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	for _, c := range []struct {
		name          string
		bi            *debug.BuildInfo
		ver, rev, at  string
		want          Info
		short, inLine string
	}{
		{name: "go run", bi: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}},
			want: Info{Version: "dev"}, short: "dev", inLine: "no version, revision or build time known"},
		{name: "go build in a checkout", bi: stamped,
			want:  Info{Version: "dev", Revision: "0123456789abcdef0123456789abcdef01234567", Time: "2026-12-07T19:00:00Z", Modified: true, Known: true},
			short: "dev (0123456789ab, modified)", inLine: "revision 0123456789abcdef0123456789abcdef01234567 (modified), built 2026-12-07T19:00:00Z"},
		{name: "go install", bi: &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}},
			want: Info{Version: "v1.4.0", Known: true}, short: "v1.4.0", inLine: "idemctl v1.4.0 ("},
		{name: "release ldflags win", bi: stamped, ver: "v2.0.0", rev: "fedcba9876543210", at: "2026-12-01T00:00:00Z",
			want:  Info{Version: "v2.0.0", Revision: "fedcba9876543210", Time: "2026-12-01T00:00:00Z", Known: true},
			short: "v2.0.0 (fedcba987654)", inLine: "built 2026-12-01T00:00:00Z"},
		{name: "pseudo-version of a dirty tree", bi: &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261207190000-0123456789ab+dirty"}},
			want: Info{Version: "v0.0.0-20261207190000-0123456789ab+dirty", Modified: true, Known: true}, short: "v0.0.0-20261207190000-0123456789ab+dirty"},
	} {
		got := fromBuild(c.bi, c.ver, c.rev, c.at)
		got.Go, got.OS, got.Arch = "", "", ""
		if got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
		if s := got.Short(); s != c.short {
			t.Errorf("%s: short %q, want %q", c.name, s, c.short)
		}
		if l := got.Line(); !strings.Contains(l, c.inLine) {
			t.Errorf("%s: line %q lacks %q", c.name, l, c.inLine)
		}
	}
}
