package main

import (
	"bytes"
	"debug/buildinfo"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"unicode"
)

// module is one module linked into a binary, as its build info names it
// (a replaced module by its replacement).
type module struct{ Path, Version string }

// linkedModules reads the modules a built binary links, from the build
// info the go command embedded in it, sorted by path.
func linkedModules(bin string) (goVersion string, mods []module, err error) {
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		return "", nil, fmt.Errorf("read build info of %s: %w", bin, err)
	}
	for _, d := range bi.Deps {
		mods = append(mods, moduleOf(d))
	}
	sort.Slice(mods, func(i, j int) bool { return mods[i].Path < mods[j].Path })
	return bi.GoVersion, mods, nil
}

func moduleOf(d *debug.Module) module {
	if d.Replace != nil {
		d = d.Replace
	}
	return module{Path: d.Path, Version: d.Version}
}

// licenseFile says whether a file at a module's root holds license terms
// (LICENSE, LICENSE.md, LICENCE-MIT, COPYING, UNLICENSE) or notices that
// travel with them (NOTICE, PATENTS).
func licenseFile(name string) (license, notice bool) {
	n := strings.ToUpper(name)
	for _, p := range []string{"LICENSE", "LICENCE", "COPYING", "UNLICENSE"} {
		if strings.HasPrefix(n, p) {
			return true, false
		}
	}
	return false, strings.HasPrefix(n, "NOTICE") || strings.HasPrefix(n, "PATENTS")
}

// escapePath is a module path as the module cache spells it: each
// capital letter as '!' and its lower case.
func escapePath(p string) string {
	var b strings.Builder
	for _, r := range p {
		if unicode.IsUpper(r) {
			b.WriteByte('!')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// moduleLicenses are the license and notice files at the root of a
// module in the cache, by name; an error when it has no license.
func moduleLicenses(modcache string, m module) (map[string][]byte, error) {
	dir := filepath.Join(modcache, escapePath(m.Path)+"@"+escapePath(m.Version))
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%s %s: not in the module cache (%s): run go mod download", m.Path, m.Version, dir)
	}
	found, haveLicense := map[string][]byte{}, false
	for _, e := range ents {
		lic, notice := licenseFile(e.Name())
		if e.IsDir() || (!lic && !notice) {
			continue
		}
		if found[e.Name()], err = os.ReadFile(filepath.Join(dir, e.Name())); err != nil {
			return nil, err
		}
		haveLicense = haveLicense || lic
	}
	if !haveLicense {
		return nil, fmt.Errorf("%s %s: no license file (LICENSE, COPYING, …) in %s", m.Path, m.Version, dir)
	}
	return found, nil
}

const rule = "================================================================================\n"

// thirdPartyLicenses is THIRD_PARTY_LICENSES for a binary: one section
// per linked module, then the Go standard library's, each with the text
// of every license and notice file the module ships.
func thirdPartyLicenses(modcache, goroot, goVersion string, mods []module) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "idemctl links the following modules; their license terms follow.\n\n")
	for _, m := range mods {
		files, err := moduleLicenses(modcache, m)
		if err != nil {
			return nil, err
		}
		section(&b, m.Path+" "+m.Version, files)
	}
	std := map[string][]byte{}
	for _, n := range []string{"LICENSE", "PATENTS"} {
		body, err := os.ReadFile(filepath.Join(goroot, n))
		if err != nil {
			return nil, fmt.Errorf("the Go standard library's %s: %w", n, err)
		}
		std[n] = body
	}
	section(&b, "Go standard library "+goVersion, std)
	return b.Bytes(), nil
}

// section writes one module's heading and its files, by name.
func section(b *bytes.Buffer, title string, files map[string][]byte) {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(b, "%s%s\n%s", rule, title, rule)
	for _, n := range names {
		fmt.Fprintf(b, "\n--- %s\n\n%s", n, files[n])
		if !bytes.HasSuffix(files[n], []byte("\n")) {
			b.WriteByte('\n')
		}
	}
	b.WriteByte('\n')
}
