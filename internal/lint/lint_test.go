package lint

import (
	"fmt"
	"go/ast"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// Rule 1, wall clock. The packages whose decisions depend on time read it
// from their caller (meta/namespace and meta/cluster take `now`) or from
// their Options' clockwork.Clock (meta.Options.Clock,
// datanode.Options.Clock, ServerOptions.Clock, AgentOptions.Clock,
// replication.NewLimits' clock), so that tests drive expiry, liveness and
// periods with a fake clock. Their non-test files call none of package
// time's clock functions but where a wallClockAllow entry says why real
// time is meant (latency measured for metrics, I/O deadlines, polling).
//
// meta/consensus is out of scope: Raft's ticks are real time by design (a
// Raft node's liveness is the host's), and its tests drive the raft core
// directly.
var wallClockPackages = map[string]bool{
	"meta": true, "meta/namespace": true, "meta/cluster": true,
	"datanode": true, "datanode/agent": true, "datanode/replication": true, "datanode/scanner": true,
}

var wallClockFuncs = names("Now", "Since", "Until", "NewTicker", "NewTimer", "After", "AfterFunc", "Tick", "Sleep")

var wallClockRule = rule{name: "wall clock",
	fix:   "take the time from the caller (now) or from the Options' Clock (clockwork.Clock)",
	allow: "wallClockAllow"}

func checkWallClock(files []*srcFile) []finding {
	var out []finding
	for _, f := range inPackages(files, wallClockPackages, false) {
		out = append(out, calls(f, f.imports("time"), wallClockFuncs)...)
	}
	return out
}

func TestWallClock(t *testing.T) {
	wallClockRule.report(t, checkWallClock(module(t)), wallClockAllow)
}

// Rule 2, os files. A package whose file I/O goes through a vfs.FS (it
// names pebble's vfs.FS in a non-test file) makes no os file call in its
// non-test files, so that an in-memory or error-injecting FS sees all of
// it; osFileAllow lists the calls that must reach the OS, and
// osFilePackages the packages that only pass an FS along.
var osFileFuncs = names("Open", "OpenFile", "Create", "CreateTemp", "ReadFile", "WriteFile",
	"Remove", "RemoveAll", "Rename", "Mkdir", "MkdirAll", "MkdirTemp", "ReadDir", "Stat", "Lstat",
	"Truncate", "Chmod", "Chown", "Lchown", "Chtimes", "Link", "Symlink", "Readlink",
	"DirFS", "CopyFS", "OpenRoot", "OpenInRoot")

var osFileRule = rule{name: "os files beside vfs.FS",
	fix:   "go through the package's vfs.FS",
	allow: "osFileAllow"}

const pebbleVFS = "github.com/cockroachdb/pebble/v2/vfs"

func checkOSFiles(files []*srcFile, exempt, also map[string]string) []finding {
	pkgs := map[string]bool{}
	for pkg := range also {
		pkgs[pkg] = true
	}
	for _, f := range files {
		if _, ok := exempt[f.pkg]; !ok && !f.test && len(calls(f, f.imports(pebbleVFS), names("FS"))) > 0 {
			pkgs[f.pkg] = true
		}
	}
	var out []finding
	for _, f := range inPackages(files, pkgs, false) {
		out = append(out, calls(f, f.imports("os"), osFileFuncs)...)
	}
	return out
}

func TestOSFiles(t *testing.T) {
	files := module(t)
	for _, pkg := range sortedKeys(osFilePackages) {
		if len(inPackages(files, names(pkg), false)) == 0 {
			t.Errorf("house rule %q: osFilePackages lists %q, which has no Go file: remove the entry", osFileRule.name, pkg)
		}
	}
	osFileRule.report(t, checkOSFiles(files, osFilePackages, osFileAlso), osFileAllow)
}

// Rule 3, prometheus. Servers keep snapshot structs and accept small hooks;
// package telemetry turns them into Prometheus collectors (its doc.go), and
// is the only importer of github.com/prometheus/..., test files included.
var prometheusRule = rule{name: "prometheus only in telemetry",
	fix:   "export the numbers as a snapshot or a hook and collect them in package telemetry (telemetry.NewRegistry for a registry)",
	allow: "prometheusAllow"}

func checkPrometheus(files []*srcFile) []finding {
	var out []finding
	for _, f := range files {
		if f.pkg == "telemetry" {
			continue
		}
		for _, imp := range f.ast.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); strings.HasPrefix(p, "github.com/prometheus/") {
				out = append(out, finding{path: f.path, line: f.line(imp.Pos()), key: f.path, what: "imports " + p})
			}
		}
	}
	return out
}

func TestPrometheusImports(t *testing.T) {
	prometheusRule.report(t, checkPrometheus(module(t)), prometheusAllow)
}

// Rule 4, size: no file over maxFileLines lines, no function over
// maxFuncLines (from `func` to its closing brace), test files included.
const (
	maxFileLines = 800
	maxFuncLines = 150
)

var sizeRule = rule{name: "size",
	fix:   "split the file by job, or extract the separable steps of the function into helpers",
	allow: "no allowlist: there is no exception"}

func checkSize(files []*srcFile, fileMax, funcMax int) []finding {
	var out []finding
	for _, f := range files {
		if f.lines > fileMax {
			out = append(out, finding{path: f.path, line: 1, key: f.path,
				what: fmt.Sprintf("the file has %d lines, over %d", f.lines, fileMax)})
		}
		for _, decl := range f.ast.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			start, end := f.line(fd.Pos()), f.line(fd.End())
			if n := end - start + 1; n > funcMax {
				out = append(out, finding{path: f.path, line: start, key: f.path + ":" + funcKey(fd),
					what: fmt.Sprintf("%s has %d lines, over %d", funcKey(fd), n, funcMax)})
			}
		}
	}
	return out
}

func TestSize(t *testing.T) {
	sizeRule.report(t, checkSize(module(t), maxFileLines, maxFuncLines), nil)
}

// Rule 5, doc comments: every exported function, method of an exported
// type, type, constant and variable of the cores has a doc comment (a
// constant or variable may share its group's, or have a line comment).
// Struct fields and interface methods are not checked.
var docPackages = map[string]bool{
	"meta/namespace": true, "meta/cluster": true, "wire": true, "walfs": true,
	"datanode/container": true, "datanode/scanner": true, "checksum": true, "ec": true,
}

var docRule = rule{name: "doc comments in the cores",
	fix:   "write a doc comment that starts with the name and says what it is for",
	allow: "no allowlist: there is no exception"}

func checkDocs(files []*srcFile) []finding {
	var out []finding
	for _, f := range inPackages(files, docPackages, false) {
		missing := func(pos token.Pos, name string) {
			out = append(out, finding{path: f.path, line: f.line(pos), key: f.path + ":" + name,
				what: name + " is exported and has no doc comment"})
		}
		for _, decl := range f.ast.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Name.IsExported() && (d.Recv == nil || ast.IsExported(recvType(d.Recv.List[0].Type))) && d.Doc == nil {
					missing(d.Pos(), funcKey(d))
				}
			case *ast.GenDecl:
				if d.Doc != nil {
					continue
				}
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() && s.Doc == nil {
							missing(s.Pos(), s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() && s.Doc == nil && s.Comment == nil {
								missing(n.Pos(), n.Name)
							}
						}
					}
				}
			}
		}
	}
	return out
}

func TestDocComments(t *testing.T) {
	docRule.report(t, checkDocs(module(t)), nil)
}

func names(s ...string) map[string]bool {
	m := make(map[string]bool, len(s))
	for _, n := range s {
		m[n] = true
	}
	return m
}
