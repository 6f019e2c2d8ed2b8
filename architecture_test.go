package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/idemctl/idemctl"

// layers places every package of the module on a floor (ARCHITECTURE.md
// draws the house): product code may import only packages on its own floor
// or below. A new package needs a line here, and one there.
var layers = map[string]int{
	// 0 foundations: no idemctl imports but each other's
	"internal/units": 0, "internal/buildinfo": 0, "internal/xdg": 0, "internal/yamldoc": 0, "internal/safefile": 0,
	"internal/redisconn": 0, "inspect/rdb": 0, "inspect/keytemplate": 0, "inspect/pace": 0, "inspect/topology": 0, "inspect/glob": 0, "inspect/dedup": 0, "inspect/histogram": 0, "inspect/topk": 0, "internal/appsim": 0, "internal/offheap": 0,
	// 1 the read engine
	"inspect": 1, "inspect/detect": 1, "inspect/filter": 1, "inspect/ledger": 1, "inspect/snapshot": 1, "inspect/lookup": 1, "inspect/recordstore": 1, "inspect/streams": 1, "inspect/follow": 1, "verify/hookspec": 1,
	// 2 the write path, the rules and the config file
	"actions": 2, "actions/audit": 2, "actions/write": 2, "doctor": 2, "config": 2,
	// 3 the source-of-truth hooks, on the write path
	"verify": 3,
	// 4 services and screens over the engine
	"reaper": 4, "exporter": 4, "ui": 4, "ui/common": 4, "ui/streams": 4, "sandbox": 4,
	// 5 the command layer
	"cli": 5, "cli/docgen": 5, "cli/report": 5,
	// 6 programs
	"": 6, "bench": 6, "release": 6,
}

// testKits are imported by tests only (and by the benchmark harness, a
// measuring program that starts its own servers).
const testKits = "internal/testkit/"

// Test-only packages: no product code of their own.
var testOnly = map[string]bool{"acceptance": true, "deploy": true}

type goFile struct {
	pkg     string // module-relative folder
	test    bool
	imports []string
	doc     string // the package doc comment, if this file holds it
}

func moduleFiles(t *testing.T) []goFile {
	t.Helper()
	var out []goFile
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		gf := goFile{pkg: filepath.ToSlash(filepath.Dir(path)), test: strings.HasSuffix(path, "_test.go")}
		if gf.pkg == "." {
			gf.pkg = ""
		}
		if f.Doc != nil {
			gf.doc = f.Doc.Text()
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			gf.imports = append(gf.imports, p)
		}
		out = append(out, gf)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func local(importPath string) (string, bool) {
	if importPath == module {
		return "", true
	}
	rel, ok := strings.CutPrefix(importPath, module+"/")
	return rel, ok
}

// The floors hold: no product code imports up a floor or a test kit, and
// every package has a floor. (That nothing below the UI reaches a terminal
// library, even indirectly, is cli's TestEngineImportsNoUI.)
func TestArchitectureLayers(t *testing.T) {
	var problems []string
	for _, f := range moduleFiles(t) {
		kit := strings.HasPrefix(f.pkg, testKits) || strings.HasSuffix(f.pkg, "test")
		floor, placed := layers[f.pkg]
		if !placed && !kit && !testOnly[f.pkg] {
			problems = append(problems, f.pkg+": no floor: add it to layers here and to ARCHITECTURE.md")
			continue
		}
		for _, im := range f.imports {
			dep, ok := local(im)
			if !ok || f.test || kit || testOnly[f.pkg] {
				continue
			}
			if strings.HasPrefix(dep, testKits) {
				if f.pkg != "bench" {
					problems = append(problems, f.pkg+" imports the test kit "+dep+" outside a test")
				}
				continue
			}
			if df, ok := layers[dep]; ok && df > floor {
				problems = append(problems, f.pkg+" (floor "+strconv.Itoa(floor)+") imports "+dep+" (floor "+strconv.Itoa(df)+"): up a floor")
			}
		}
	}
	sort.Strings(problems)
	for _, p := range dedupe(problems) {
		t.Error(p)
	}
}

func dedupe(s []string) []string {
	var out []string
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// Every package's doc comment says what it is and, naming ARCHITECTURE.md,
// what it may import.
func TestPackagesSayTheirFloor(t *testing.T) {
	docs := map[string]string{}
	for _, f := range moduleFiles(t) {
		if !f.test {
			docs[f.pkg] += f.doc
		}
	}
	for pkg, doc := range docs {
		if !strings.Contains(doc, "ARCHITECTURE.md") {
			t.Errorf("package %q: its doc comment does not say its floor (ARCHITECTURE.md) and what it may import", pkg)
		}
	}
}

// Every test kit lives under internal/testkit, so its folder says it is
// one.
func TestTestKitsLiveInTestkit(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range moduleFiles(t) {
		if strings.HasSuffix(f.pkg, "test") && !strings.HasPrefix(f.pkg, testKits) && !testOnly[f.pkg] && !seen[f.pkg] {
			seen[f.pkg] = true
			t.Errorf("%s looks like a test kit: move it under %s", f.pkg, testKits)
		}
	}
	if _, err := os.Stat("ARCHITECTURE.md"); err != nil {
		t.Errorf("ARCHITECTURE.md: %v", err)
	}
}
