package lint

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// srcFile is one parsed Go file of the module.
type srcFile struct {
	path  string // slash-separated, relative to the module root
	pkg   string // its directory, e.g. "meta/namespace"
	test  bool   // a _test.go file
	lines int
	fset  *token.FileSet
	ast   *ast.File
}

// line returns the line of pos.
func (f *srcFile) line(pos token.Pos) int { return f.fset.Position(pos).Line }

// imports returns the name file f refers to the package of path by ("" when
// it does not import it, or imports it for effect or with a dot).
func (f *srcFile) imports(path string) string {
	for _, imp := range f.ast.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if p != path {
			continue
		}
		if imp.Name == nil {
			return p[strings.LastIndex(p, "/")+1:]
		}
		if imp.Name.Name == "_" || imp.Name.Name == "." {
			return ""
		}
		return imp.Name.Name
	}
	return ""
}

// finding is one breach of a rule.
type finding struct {
	path string
	line int
	key  string // what an allowlist names: "path:Func", "path:Type.Method" or "path"
	what string
}

var (
	moduleOnce  sync.Once
	moduleFiles []*srcFile
	moduleErr   error
)

// module returns the module's non-generated Go files: not under bin/,
// .cache/, testdata/ or a directory starting with "." or "_", nor in a
// nested module (deploy/validate), nor *.pb.go or a file marked generated.
func module(t *testing.T) []*srcFile {
	t.Helper()
	moduleOnce.Do(func() { moduleFiles, moduleErr = loadModule("../..") })
	if moduleErr != nil {
		t.Fatal(moduleErr)
	}
	if len(moduleFiles) < 100 {
		t.Fatalf("found only %d Go files under the module root: is the test run from internal/lint?", len(moduleFiles))
	}
	return moduleFiles
}

func loadModule(root string) ([]*srcFile, error) {
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return nil, fmt.Errorf("lint: no module root at %s: %w", root, err)
	}
	var files []*srcFile
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			switch {
			case rel == ".":
				return nil
			case rel == "bin", name == "testdata", name == "vendor",
				strings.HasPrefix(name, "."), strings.HasPrefix(name, "_"):
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir // its own module
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, ".pb.go") {
			return nil
		}
		f, err := parseFile(fset, p, rel)
		if err != nil || f == nil {
			return err
		}
		files = append(files, f)
		return nil
	})
	sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
	return files, err
}

// parseFile parses the file at p as the module's file rel; it returns nil
// for a generated file.
func parseFile(fset *token.FileSet, p, rel string) (*srcFile, error) {
	src, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	af, err := parser.ParseFile(fset, rel, src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	if ast.IsGenerated(af) {
		return nil, nil
	}
	n := bytes.Count(src, []byte("\n"))
	if len(src) > 0 && src[len(src)-1] != '\n' {
		n++
	}
	return &srcFile{path: rel, pkg: pathDir(rel), test: strings.HasSuffix(rel, "_test.go"),
		lines: n, fset: fset, ast: af}, nil
}

func pathDir(rel string) string {
	if i := strings.LastIndex(rel, "/"); i >= 0 {
		return rel[:i]
	}
	return "."
}

// testdata parses testdata/name as if it were the module's file rel, for
// the tests that show a rule can fail.
func testdata(t *testing.T, name, rel string) []*srcFile {
	t.Helper()
	f, err := parseFile(token.NewFileSet(), filepath.Join("testdata", name), rel)
	if err != nil || f == nil {
		t.Fatalf("testdata/%s: %v (or generated)", name, err)
	}
	return []*srcFile{f}
}

// funcKey names the function decl for allowlists: "Func" or "Type.Method".
func funcKey(decl *ast.FuncDecl) string {
	if decl.Recv == nil || len(decl.Recv.List) == 0 {
		return decl.Name.Name
	}
	return recvType(decl.Recv.List[0].Type) + "." + decl.Name.Name
}

// recvType is the name of a receiver's type, without * or type parameters.
func recvType(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return "?"
		}
	}
}

// calls returns the uses of pkgName.Sel in f, Sel in names, each with the
// function it is in ("" at package level). pkgName is the file's name for
// the package (srcFile.imports); a local variable of that name is no use.
func calls(f *srcFile, pkgName string, names map[string]bool) []finding {
	if pkgName == "" {
		return nil
	}
	var out []finding
	for _, decl := range f.ast.Decls {
		fn := ""
		if fd, ok := decl.(*ast.FuncDecl); ok {
			fn = funcKey(fd)
		}
		ast.Inspect(decl, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			id, ok := sel.X.(*ast.Ident)
			if ok && id.Name == pkgName && id.Obj == nil && names[sel.Sel.Name] {
				key := f.path + ":" + fn
				if fn == "" {
					key = f.path
				}
				out = append(out, finding{path: f.path, line: f.line(sel.Pos()), key: key,
					what: pkgName + "." + sel.Sel.Name})
			}
			return true
		})
	}
	return out
}

// reporter is the part of testing.TB that rule.report uses.
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
}

// rule is how a rule's breaches are reported.
type rule struct {
	name  string // e.g. "wall clock"
	fix   string // how to fix a breach
	allow string // the allowlist's variable, for the message
}

// report fails t for each finding whose key allow lacks, and for each
// entry of allow that matched none (it is stale: remove it).
func (r rule) report(t reporter, found []finding, allow map[string]string) {
	t.Helper()
	used := map[string]bool{}
	for _, f := range found {
		if _, ok := allow[f.key]; ok {
			used[f.key] = true
			continue
		}
		t.Errorf("%s:%d: house rule %q: %s\n\tfix: %s;\n\tor, if it must stay, add %q to %s in internal/lint with the reason",
			f.path, f.line, r.name, f.what, r.fix, f.key, r.allow)
	}
	for _, k := range sortedKeys(allow) {
		if !used[k] {
			t.Errorf("house rule %q: %s lists %q, which no longer breaks it: remove the entry", r.name, r.allow, k)
		}
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// inPackages returns the files of files in pkgs, test files only when
// tests is set.
func inPackages(files []*srcFile, pkgs map[string]bool, tests bool) []*srcFile {
	var out []*srcFile
	for _, f := range files {
		if pkgs[f.pkg] && (tests || !f.test) {
			out = append(out, f)
		}
	}
	return out
}
