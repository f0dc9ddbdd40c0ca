// benchsmith's Go type checker: go/parser + go/types over every package of a tree, in one process.
// args[1]: a JSON file {"files": [...], "packages": {dir: import path}, "goos", "goarch"}; paths relative to the
// working directory.  Prints one JSON object per line: start, skip, parse, error, done.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/scanner"
	"go/token"
	"go/types"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
)

type input struct {
	Files    []string          `json:"files"`
	Packages map[string]string `json:"packages"`
	GOOS     string            `json:"goos"`
	GOARCH   string            `json:"goarch"`
}

type group struct {
	dir, name, path       string
	files, tests, xtests  []*ast.File
	names, tnames, xnames []string
}

var (
	out  = bufio.NewWriterSize(os.Stdout, 1<<16)
	fset = token.NewFileSet()
)

func emit(v map[string]interface{}) {
	b, _ := json.Marshal(v)
	out.Write(b)
	out.WriteByte('\n')
}

type loader struct {
	in       input
	libs     map[string]*group
	byPath   map[string]string
	done     map[string]*types.Package
	checking map[string]bool
	std      types.Importer
	errs     int
}

func (l *loader) Import(p string) (*types.Package, error) { return l.ImportFrom(p, "", 0) }

func (l *loader) ImportFrom(p, _ string, _ types.ImportMode) (*types.Package, error) {
	if dir, ok := l.byPath[p]; ok {
		if g := l.libs[dir]; g != nil {
			return l.check(g, g.files, g.names, "lib")
		}
		return nil, fmt.Errorf("no Go files for %s in the analysed tree", p)
	}
	if p == "C" || strings.Contains(strings.SplitN(p, "/", 2)[0], ".") {
		// never looked up anywhere: a module outside the tree is a failed import (a fake package)
		return nil, fmt.Errorf("package %s is not in the analysed tree", p)
	}
	return l.std.Import(p)
}

func (l *loader) check(g *group, files []*ast.File, names []string, variant string) (*types.Package, error) {
	key := g.dir + "\x00" + g.name + "\x00" + variant
	if pkg, ok := l.done[key]; ok {
		return pkg, nil
	}
	if l.checking[key] {
		return nil, fmt.Errorf("import cycle through %s", g.path)
	}
	l.checking[key] = true
	defer delete(l.checking, key)
	report := map[string]bool{}
	for _, n := range names {
		report[n] = true
	}
	if variant == "test" { // the library's own files were reported by the library check
		for _, n := range g.names {
			delete(report, n)
		}
	}
	conf := types.Config{
		Importer: l,
		Sizes:    types.SizesFor("gc", l.in.GOARCH),
		Error: func(err error) {
			var te types.Error
			if !errors.As(err, &te) {
				emit(map[string]interface{}{"kind": "error", "file": "", "line": 0, "col": 0, "msg": err.Error()})
				return
			}
			file, line, col := "", 0, 0
			if te.Pos.IsValid() {
				pos := fset.PositionFor(te.Pos, false) // raw: a //line directive must not move a diagnostic
				file, line, col = filepath.ToSlash(pos.Filename), pos.Line, pos.Column
			}
			if file != "" && !report[file] {
				return
			}
			l.errs++
			emit(map[string]interface{}{"kind": "error", "file": file, "line": line, "col": col, "msg": te.Msg,
				"soft": te.Soft})
		},
	}
	pkgPath := g.path
	if variant == "xtest" {
		pkgPath += "_test"
	}
	pkg, _ := conf.Check(pkgPath, fset, files, nil)
	l.done[key] = pkg
	return pkg, nil
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: benchsmith-gotype input.json")
		os.Exit(2)
	}
	defer out.Flush()
	var in input
	data, err := os.ReadFile(os.Args[1])
	if err == nil {
		err = json.Unmarshal(data, &in)
	}
	if err != nil {
		emit(map[string]interface{}{"kind": "crash", "msg": err.Error()})
		out.Flush()
		os.Exit(3)
	}
	ctx := build.Default
	ctx.GOOS, ctx.GOARCH, ctx.CgoEnabled, ctx.GOPATH = in.GOOS, in.GOARCH, false, ""
	l := &loader{in: in, libs: map[string]*group{}, byPath: map[string]string{}, done: map[string]*types.Package{},
		checking: map[string]bool{}}
	for dir, p := range in.Packages {
		l.byPath[p] = dir
	}
	// One importer for the whole standard library (two would make two distinct "fmt" packages).
	std, kind := importer.ForCompiler(fset, "gc", nil), "gc"
	if _, err := std.Import("errors"); err != nil {
		std, kind = importer.ForCompiler(fset, "source", nil), "source"
	}
	l.std = std
	emit(map[string]interface{}{"kind": "start", "importer": kind, "go": runtime.Version()})
	files := append([]string(nil), in.Files...)
	sort.Strings(files)
	type key struct{ dir, name string }
	groups := map[key]*group{}
	var order []key
	for _, f := range files {
		dir, base := path.Split(f)
		dir = strings.TrimSuffix(dir, "/")
		osdir := "."
		if dir != "" {
			osdir = filepath.FromSlash(dir)
		}
		if ok, err := ctx.MatchFile(osdir, base); err != nil || !ok {
			why := "build constraints exclude it for " + in.GOOS + "/" + in.GOARCH
			if err != nil {
				why = err.Error()
			}
			emit(map[string]interface{}{"kind": "skip", "file": f, "why": why})
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.AllErrors|parser.SkipObjectResolution)
		if err != nil {
			var list scanner.ErrorList
			line, col, msg := 0, 0, err.Error()
			if errors.As(err, &list) && len(list) > 0 {
				line, col, msg = list[0].Pos.Line, list[0].Pos.Column, list[0].Msg
			}
			emit(map[string]interface{}{"kind": "parse", "file": f, "line": line, "col": col, "msg": msg})
			continue
		}
		cgo := false
		for _, imp := range af.Imports {
			if v, _ := strconv.Unquote(imp.Path.Value); v == "C" {
				cgo = true
			}
		}
		if cgo {
			emit(map[string]interface{}{"kind": "skip", "file": f, "why": "uses cgo (import \"C\")"})
			continue
		}
		name := af.Name.Name
		test := strings.HasSuffix(base, "_test.go")
		k := key{dir, name}
		if test {
			k = key{dir, strings.TrimSuffix(name, "_test")}
		}
		g := groups[k]
		if g == nil {
			p, ok := in.Packages[dir]
			if !ok {
				p = "_/" + dir
			}
			g = &group{dir: dir, name: k.name, path: p}
			groups[k] = g
			order = append(order, k)
		}
		switch {
		case !test:
			g.files, g.names = append(g.files, af), append(g.names, f)
		case name == k.name:
			g.tests, g.tnames = append(g.tests, af), append(g.tnames, f)
		default:
			g.xtests, g.xnames = append(g.xtests, af), append(g.xnames, f)
		}
	}
	// The importable package of a directory: the name most of its non-test files declare (ties: the first).
	for _, k := range order {
		g := groups[k]
		if cur := l.libs[k.dir]; len(g.files) > 0 && (cur == nil || len(g.files) > len(cur.files)) {
			l.libs[k.dir] = g
		}
	}
	packages := 0
	for _, k := range order {
		g := groups[k]
		if len(g.files) > 0 {
			variant := "lib"
			if l.libs[k.dir] != g {
				variant = "other"
			}
			l.check(g, g.files, g.names, variant)
			packages++
		}
		if len(g.tests) > 0 {
			all := append(append([]*ast.File(nil), g.files...), g.tests...)
			l.check(g, all, append(append([]string(nil), g.names...), g.tnames...), "test")
			packages++
		}
		if len(g.xtests) > 0 {
			l.check(g, g.xtests, g.xnames, "xtest")
			packages++
		}
	}
	emit(map[string]interface{}{"kind": "done", "packages": packages, "errors": l.errs})
}
