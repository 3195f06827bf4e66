// Command surface counts the exported identifiers of this module's public
// packages (every package outside internal/ and examples/): functions,
// types, methods, struct fields and interface methods of exported types,
// constants and variables. Test files are not counted, nor files the build
// constraints exclude on linux/amd64 (so that a function declared once per
// platform or per kernel tier counts once). It prints a Markdown table per
// package with the line count of `go doc -short`.
//
//	go run ./internal/surface          # from the module root
package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	ctxt := build.Default
	ctxt.GOOS, ctxt.GOARCH, ctxt.CgoEnabled = "linux", "amd64", false
	counts := map[string]int{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			base := d.Name()
			if path != "." && (strings.HasPrefix(base, ".") || base == "testdata" || base == "internal" || base == "examples") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		if ok, err := ctxt.MatchFile(filepath.Dir(path), d.Name()); err != nil || !ok {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		counts[filepath.Dir(path)] += count(f)
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "surface:", err)
		os.Exit(1)
	}
	pkgs := make([]string, 0, len(counts))
	for p := range counts {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	fmt.Println("| package | exported identifiers | `go doc -short` lines |")
	fmt.Println("|---|---:|---:|")
	total := 0
	for _, p := range pkgs {
		total += counts[p]
		out, _ := exec.Command("go", "doc", "-short", "./"+p).Output()
		name := "`" + filepath.ToSlash(p) + "`"
		if p == "." {
			name = "module root (doc.go)"
		}
		fmt.Printf("| %s | %d | %d |\n", name, counts[p], bytes.Count(out, []byte("\n")))
	}
	fmt.Printf("| total | %d | |\n", total)
}

// count returns the exported identifiers a file declares.
func count(f *ast.File) int {
	n := 0
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv != nil && !exportedRecv(d.Recv.List[0].Type) {
				continue
			}
			n++
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					n++
					n += members(s.Type)
				case *ast.ValueSpec:
					for _, id := range s.Names {
						if id.IsExported() {
							n++
						}
					}
				}
			}
		}
	}
	return n
}

// members counts the exported fields of a struct type or the methods of
// an interface type.
func members(t ast.Expr) int {
	n := 0
	switch t := t.(type) {
	case *ast.StructType:
		for _, f := range t.Fields.List {
			if len(f.Names) == 0 { // embedded
				if id := embeddedName(f.Type); id != nil && id.IsExported() {
					n++
				}
				continue
			}
			for _, id := range f.Names {
				if id.IsExported() {
					n++
				}
			}
		}
	case *ast.InterfaceType:
		for _, f := range t.Methods.List {
			for _, id := range f.Names {
				if id.IsExported() {
					n++
				}
			}
		}
	}
	return n
}

func embeddedName(t ast.Expr) *ast.Ident {
	switch t := t.(type) {
	case *ast.Ident:
		return t
	case *ast.StarExpr:
		return embeddedName(t.X)
	case *ast.SelectorExpr:
		return t.Sel
	case *ast.IndexExpr:
		return embeddedName(t.X)
	}
	return nil
}

func exportedRecv(t ast.Expr) bool {
	id := embeddedName(t)
	if ix, ok := t.(*ast.IndexListExpr); ok {
		id = embeddedName(ix.X)
	}
	return id != nil && id.IsExported()
}
