package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The TUI is a root model over components (ARCHITECTURE.md, "A new
// screen"): every screen is a type that implements the component
// interface — asserted at compile time in ui/common.go, which this test
// keeps listing every screen — the root keeps at most 20 fields, and no
// type in ui/ has more than 40 methods.
func TestUIScreensAreComponents(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("ui/*.go")
	if err != nil {
		t.Fatal(err)
	}
	methods := map[string]int{}
	screens := map[string]bool{}
	asserted := map[string]bool{}
	modelFields := -1
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil && len(d.Recv.List) == 1 {
					methods[receiverName(d.Recv.List[0].Type)]++
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					noteSpec(s, screens, asserted, &modelFields)
				}
			}
		}
	}
	if modelFields < 0 || modelFields > 20 {
		t.Errorf("ui.Model has %d fields: the root keeps the chrome, the routing, the scan and the session (at most 20); give a screen its state", modelFields)
	}
	for typ, n := range methods {
		if n > 40 {
			t.Errorf("ui.%s has %d methods (at most 40): split it into components", typ, n)
		}
	}
	for s := range screens {
		if !asserted[s] && !screenBases[s] {
			t.Errorf("ui.%s is a screen but not asserted a component in ui/common.go (var _ component = (*%s)(nil))", s, s)
		}
	}
	if len(asserted) == 0 {
		t.Error("ui/ asserts no type a component")
	}
}

// screenBases are types named …Screen that are parts screens embed, not
// screens.
var screenBases = map[string]bool{"drillScreen": true} // the Overview's and Stats' shared drillable page

func receiverName(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// noteSpec records a type named …Screen, the root Model's field count,
// and a `_ component = (*T)(nil)` assertion.
func noteSpec(s ast.Spec, screens, asserted map[string]bool, modelFields *int) {
	switch s := s.(type) {
	case *ast.TypeSpec:
		if strings.HasSuffix(s.Name.Name, "Screen") {
			screens[s.Name.Name] = true
		}
		if st, ok := s.Type.(*ast.StructType); ok && s.Name.Name == "Model" {
			n := 0
			for _, f := range st.Fields.List {
				n += max(len(f.Names), 1)
			}
			*modelFields = n
		}
	case *ast.ValueSpec:
		if id, ok := s.Type.(*ast.Ident); !ok || id.Name != "component" {
			return
		}
		for _, v := range s.Values {
			if c, ok := v.(*ast.CallExpr); ok {
				if p, ok := c.Fun.(*ast.ParenExpr); ok {
					asserted[receiverName(p.X)] = true
				}
			}
		}
	}
}
