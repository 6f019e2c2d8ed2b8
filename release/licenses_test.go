package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A module whose folder in the module cache holds no license fails
// THIRD_PARTY_LICENSES, naming it; notices travel with the license.
func TestThirdPartyLicensesNeedEveryLicense(t *testing.T) {
	cache, goroot := t.TempDir(), t.TempDir()
	put := func(path, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put(filepath.Join(goroot, "LICENSE"), "Go's BSD license\n")
	put(filepath.Join(goroot, "PATENTS"), "Go's patent grant\n")
	put(filepath.Join(cache, "github.com/!burnt!sushi/toml@v1.0.0/COPYING"), "MIT terms\n")
	put(filepath.Join(cache, "example.com/apache@v2.0.0+incompatible/LICENSE.txt"), "Apache terms\n")
	put(filepath.Join(cache, "example.com/apache@v2.0.0+incompatible/NOTICE"), "Apache notice\n")
	put(filepath.Join(cache, "example.com/none@v0.1.0/README.md"), "no license here\n")
	good := []module{{"example.com/apache", "v2.0.0+incompatible"}, {"github.com/BurntSushi/toml", "v1.0.0"}}
	out, err := thirdPartyLicenses(cache, goroot, "go1.26.8", good)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\nexample.com/apache v2.0.0+incompatible\n", "Apache terms", "Apache notice",
		"\ngithub.com/BurntSushi/toml v1.0.0\n", "MIT terms", "\nGo standard library go1.26.8\n", "Go's patent grant"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("THIRD_PARTY_LICENSES lacks %q:\n%s", want, out)
		}
	}
	_, err = thirdPartyLicenses(cache, goroot, "go1.26.8", append(good, module{"example.com/none", "v0.1.0"}))
	if err == nil || !strings.Contains(err.Error(), "example.com/none v0.1.0: no license file") {
		t.Errorf("a module without a license: %v, want an error naming it", err)
	}
}
