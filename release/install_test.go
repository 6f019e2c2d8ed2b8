package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// needTools fails (never skips) when a tool the install tests run is
// missing, with the line that installs it.
func needTools(t *testing.T, tools map[string]string) {
	t.Helper()
	var missing, pkgs []string
	for tool, pkg := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			missing, pkgs = append(missing, tool), append(pkgs, pkg)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		sort.Strings(pkgs)
		t.Fatalf("%s missing: install with: sudo apt-get install -y %s (bash .ci/test does, as root)", strings.Join(missing, ", "), strings.Join(pkgs, " "))
	}
}

// run runs a command and returns its output; it fails the test on error.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// debFiles are the regular files a .deb installs (dpkg-deb -c), by path.
func debFiles(t *testing.T, deb string) []string {
	t.Helper()
	var files []string
	for _, l := range strings.Split(run(t, "dpkg-deb", "-c", deb), "\n") {
		f := strings.Fields(l)
		if len(f) >= 6 && strings.HasPrefix(f[0], "-") {
			files = append(files, strings.TrimPrefix(f[len(f)-1], "."))
		}
	}
	sort.Strings(files)
	return files
}

// wantPackageFiles are the files the packages must install (besides the
// man pages beyond these two).
var wantPackageFiles = []string{
	"/usr/bin/idemctl", configPath, unitPath, sysusersDst,
	manDir + "idemctl.1.gz", manDir + "idemctl-exporter.1.gz",
	completionPaths["bash"], completionPaths["zsh"], completionPaths["fish"],
	docDir + "config.example.yaml", docDir + "LICENSE", docDir + "THIRD_PARTY_LICENSES", docDir + "README.md",
}

// The .deb installed as a user installs it: the binary names its build,
// man finds the page, bash-completion finds the completion, the unit
// verifies, the system user exists; dpkg -r leaves only the config.
func TestDebInstallsAndRemovesCleanly(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test needs root: it installs the .deb with dpkg -i and removes it (CI runs as root)")
	}
	needTools(t, map[string]string{"dpkg": "dpkg", "man": "man-db", "bash": "bash"})
	if _, err := os.Stat("/usr/share/bash-completion/bash_completion"); err != nil {
		t.Fatal("bash-completion missing: install with: sudo apt-get install -y bash-completion")
	}
	r := release(t)
	deb := r.artifact(t, "idemctl_*_"+runtime.GOARCH+".deb")
	if exec.Command("dpkg", "-s", "idemctl").Run() == nil {
		t.Log("idemctl was installed before the test: purging it first")
		run(t, "dpkg", "--purge", "idemctl")
	}
	t.Cleanup(func() { exec.Command("dpkg", "--purge", "idemctl").Run() })
	run(t, "dpkg", "-i", deb)
	installed := debFiles(t, deb)
	for _, f := range wantPackageFiles {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("after dpkg -i: %v", err)
		}
	}
	checkInstalled(t, r)
	run(t, "dpkg", "-r", "idemctl")
	for _, f := range installed {
		_, err := os.Stat(f)
		if kept := f == configPath; kept != (err == nil) {
			t.Errorf("after dpkg -r: %s: %v (only %s is kept)", f, err, configPath)
		}
	}
	if _, err := os.Stat(strings.TrimSuffix(docDir, "/")); err == nil {
		t.Errorf("after dpkg -r: %s is left behind", docDir)
	}
	run(t, "dpkg", "--purge", "idemctl")
	if _, err := os.Stat(filepath.Dir(configPath)); err == nil {
		t.Errorf("after dpkg --purge: %s is left behind", filepath.Dir(configPath))
	}
}

// checkInstalled checks the installed package from a user's side.
func checkInstalled(t *testing.T, r *built) {
	t.Helper()
	if out := run(t, "/usr/bin/idemctl", "version"); !strings.Contains(out, "revision "+r.revision) {
		t.Errorf("idemctl version: %q names no revision %s", out, r.revision)
	}
	for _, page := range []string{"idemctl", "idemctl-exporter"} {
		if out := strings.TrimSpace(run(t, "man", "-w", page)); out != manDir+page+".1.gz" {
			t.Errorf("man -w %s: %q, want %s", page, out, manDir+page+".1.gz")
		}
	}
	// bash-completion's loader, as an interactive shell calls it on the
	// first <tab> after "idemctl ".
	load := `. /usr/share/bash-completion/bash_completion; if declare -F _comp_load >/dev/null; then _comp_load idemctl; else __load_completion idemctl; fi && complete -p idemctl`
	if out := run(t, "bash", "-c", load); !strings.Contains(out, " idemctl") {
		t.Errorf("bash-completion loads no completion for idemctl: %q", out)
	}
	if out := run(t, "getent", "passwd", "idemctl"); !strings.Contains(out, ":/nonexistent:") {
		t.Errorf("the exporter's user: %q, want a system user with no home (/nonexistent)", out)
	}
	cmd := exec.Command("/usr/bin/idemctl", "config", "view")
	cmd.Env = []string{"IDEMCTL_CONFIG=" + configPath, "HOME=" + t.TempDir()}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("IDEMCTL_CONFIG=%s idemctl config view: %v\n%s", configPath, err, out)
	}
	if _, err := exec.LookPath("systemd-analyze"); err == nil {
		run(t, "systemd-analyze", "verify", unitPath)
		// systemd's own exposure score, 0 (locked down) to 10: 1.2 today.
		run(t, "systemd-analyze", "security", "--offline=true", "--threshold=20", unitPath)
	} else {
		t.Log("no systemd-analyze on this machine: the unit is checked by TestUnitIsHardened only")
	}
	checkUnit(t, unitPath)
}

// The .rpm installs the same files as the .deb, marks the config as
// one, and creates the user in its postinstall.
func TestRPMHoldsTheSameFiles(t *testing.T) {
	needTools(t, map[string]string{"rpm": "rpm", "dpkg-deb": "dpkg"})
	r := release(t)
	arch := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}
	for _, goarch := range []string{"amd64", "arm64"} {
		rpm := r.artifact(t, "idemctl-*."+arch[goarch]+".rpm")
		var files []string
		for _, l := range strings.Split(run(t, "rpm", "-qp", "--qf", `[%{FILEMODES:perms} %{FILENAMES}\n]`, rpm), "\n") {
			if perms, path, ok := strings.Cut(l, " "); ok && strings.HasPrefix(perms, "-") {
				files = append(files, path)
			}
		}
		sort.Strings(files)
		deb := debFiles(t, r.artifact(t, "idemctl_*_"+goarch+".deb"))
		if strings.Join(files, "\n") != strings.Join(deb, "\n") {
			t.Errorf("%s: rpm -qlp lists\n%s\nthe .deb installs\n%s", filepath.Base(rpm), strings.Join(files, "\n"), strings.Join(deb, "\n"))
		}
		for _, f := range wantPackageFiles {
			if i := sort.SearchStrings(files, f); i == len(files) || files[i] != f {
				t.Errorf("%s: no %s", filepath.Base(rpm), f)
			}
		}
		if out := strings.TrimSpace(run(t, "rpm", "-qcp", rpm)); out != configPath {
			t.Errorf("%s: rpm -qcp lists %q as config, want %s", filepath.Base(rpm), out, configPath)
		}
		if out := run(t, "rpm", "-qp", "--scripts", rpm); !strings.Contains(out, "systemd-sysusers") || !strings.Contains(out, "useradd --system") {
			t.Errorf("%s: the postinstall creates no system user:\n%s", filepath.Base(rpm), out)
		}
	}
}
