package mongoerr

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestNoLiteralCodes fails listing every place in the module's non-test Go
// files that passes an error code as a number rather than by name:
// mongoerr.New(<digits>, ...), errf(<digits>, ...) (internal/expr's
// wrapper of New), Error{Code: <digits>} and comparisons x.Code == <digits>.
// Name the code in locations.go (or use error_codes.yml's name) instead.
// Test files and the test/ tree (e2e, conformance) may keep literal codes in
// their expectations; the generated codes_gen.go and the separate modules
// (bench/) are not read.
func TestNoLiteralCodes(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found: %v", err)
	}
	var found []string
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == root {
				return nil
			}
			name := d.Name()
			if strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor" {
				return filepath.SkipDir
			}
			if p == filepath.Join(root, "test") {
				return filepath.SkipDir // e2e and conformance tests: expectations
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || d.Name() == "codes_gen.go" {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		for _, pos := range literalCodes(f) {
			rel, _ := filepath.Rel(root, fset.Position(pos).Filename)
			found = append(found, rel+":"+strconv.Itoa(fset.Position(pos).Line))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 {
		slices.Sort(found)
		t.Errorf("%d error codes passed as numbers; name them (locations.go):\n%s", len(found), strings.Join(found, "\n"))
	}
}

var decimal = regexp.MustCompile(`^[0-9]+$`)

// literalCodes returns the positions of the literal codes in f.
func literalCodes(f *ast.File) []token.Pos {
	isLit := func(e ast.Expr) bool {
		l, ok := e.(*ast.BasicLit)
		return ok && l.Kind == token.INT && decimal.MatchString(l.Value)
	}
	var out []token.Pos
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.CallExpr:
			if len(x.Args) > 0 && isLit(x.Args[0]) && isCodeFunc(x.Fun) {
				out = append(out, x.Args[0].Pos())
			}
		case *ast.KeyValueExpr:
			if k, ok := x.Key.(*ast.Ident); ok && k.Name == "Code" && isLit(x.Value) {
				out = append(out, x.Value.Pos())
			}
		case *ast.BinaryExpr:
			if x.Op != token.EQL && x.Op != token.NEQ {
				break
			}
			for _, pair := range [][2]ast.Expr{{x.X, x.Y}, {x.Y, x.X}} {
				if s, ok := pair[0].(*ast.SelectorExpr); ok && s.Sel.Name == "Code" && isLit(pair[1]) {
					out = append(out, pair[1].Pos())
				}
			}
		}
		return true
	})
	return out
}

// isCodeFunc reports the functions whose first argument is an error code.
func isCodeFunc(fun ast.Expr) bool {
	switch f := fun.(type) {
	case *ast.SelectorExpr:
		id, ok := f.X.(*ast.Ident)
		return ok && id.Name == "mongoerr" && f.Sel.Name == "New"
	case *ast.Ident:
		return f.Name == "errf" || f.Name == "New"
	}
	return false
}
