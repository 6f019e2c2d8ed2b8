package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The TUI is a root model over components (ARCHITECTURE.md, "A new
// screen"): every screen, in ui/ or a subpackage of it, is a type that
// implements common.Component — asserted at compile time (ui/shared.go
// lists every screen) — the root keeps at most 20 fields, and no type in
// ui/... has more than 40 methods.
func TestUIScreensAreComponents(t *testing.T) {
	fset := token.NewFileSet()
	var files []string
	err := filepath.WalkDir("ui", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	methods := map[string]int{}
	screens := map[string]bool{}
	asserted := map[string]bool{}
	modelFields := -1
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		pkg := filepath.Base(filepath.Dir(path)) // ui, common, streams: how an importer names it
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil && len(d.Recv.List) == 1 {
					methods[pkg+"."+typeName(pkg, d.Recv.List[0].Type)]++
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					noteSpec(pkg, s, screens, asserted, &modelFields)
				}
			}
		}
	}
	if modelFields < 0 || modelFields > 20 {
		t.Errorf("ui.Model has %d fields: the root keeps the chrome, the routing, the scan and the session (at most 20); give a screen its state", modelFields)
	}
	for typ, n := range methods {
		if n > 40 {
			t.Errorf("%s has %d methods (at most 40): split it into components", typ, n)
		}
	}
	for s := range screens {
		if !asserted[s] && !screenBases[s] {
			t.Errorf("%s is a screen but not asserted a component (var _ common.Component = (*%s)(nil), in ui/shared.go)", s, s)
		}
	}
	if len(asserted) == 0 {
		t.Error("ui/ asserts no type a component")
	}
}

// screenBases are types named …Screen that are parts screens embed, not
// screens.
var screenBases = map[string]bool{"ui.drillScreen": true} // the Overview's and Stats' shared drillable page

// typeName is a receiver's or an asserted type's name, qualified by its
// package: helpScreen in ui is ui.helpScreen, streams.Screen is itself.
func typeName(pkg string, e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		if id, ok := e.X.(*ast.Ident); ok {
			return id.Name + "." + e.Sel.Name
		}
	}
	return ""
}

// isComponent reports whether e names the component interface: Component
// in ui/common, common.Component elsewhere.
func isComponent(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name == "Component"
	case *ast.SelectorExpr:
		return e.Sel.Name == "Component"
	}
	return false
}

// noteSpec records a type named …Screen, the root Model's field count,
// and a `_ common.Component = (*T)(nil)` assertion.
func noteSpec(pkg string, s ast.Spec, screens, asserted map[string]bool, modelFields *int) {
	switch s := s.(type) {
	case *ast.TypeSpec:
		if strings.HasSuffix(s.Name.Name, "Screen") {
			screens[pkg+"."+s.Name.Name] = true
		}
		if st, ok := s.Type.(*ast.StructType); ok && s.Name.Name == "Model" && pkg == "ui" {
			n := 0
			for _, f := range st.Fields.List {
				n += max(len(f.Names), 1)
			}
			*modelFields = n
		}
	case *ast.ValueSpec:
		if !isComponent(s.Type) {
			return
		}
		for _, v := range s.Values {
			if c, ok := v.(*ast.CallExpr); ok {
				if p, ok := c.Fun.(*ast.ParenExpr); ok {
					name := typeName(pkg, p.X)
					if !strings.Contains(name, ".") {
						name = pkg + "." + name
					}
					asserted[name] = true
				}
			}
		}
	}
}
