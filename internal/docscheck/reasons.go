package docscheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// reasonPattern is what the API server accepts as a condition's reason
// (metav1.Condition): it keeps human sentences that happen to sit in a
// field named Reason out.
var reasonPattern = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

// pkgFiles are the parsed non-test files of one directory (one package).
type pkgFiles struct {
	dir   string
	files []*ast.File
	// consts are the package's string constants by name.
	consts map[string]string
	// reasonParams are the functions (declared, or function literals
	// assigned to a variable) with a string parameter named reason: name →
	// its index.
	reasonParams map[string]int
}

// ConditionReasons returns every condition reason the Go code under roots
// (directories, relative to repo) can set, with one file:line where each is
// found. It reads the code, not the running program, so it finds reasons in
// these forms:
//
//   - a constant whose name starts with Reason;
//   - the value of a Reason (or reason) field in a composite literal, or
//     assigned to a field or variable named Reason or reason;
//   - a case of a switch on a variable named reason;
//   - an argument in the reason position of a call of a function of the
//     same package whose parameter is named reason;
//
// where the value is a string literal, a constant of the same package, or a
// constant of another package of the module (pkg.Name), and string literals
// anywhere inside a call in those positions (orDefault(x, "Fallback")).
// Values must look like reasons (reasonPattern). Reasons computed otherwise
// (a typed string converted) are not found; the test lists those itself.
func ConditionReasons(repo string, module string, roots ...string) (map[string]string, error) {
	fset := token.NewFileSet()
	pkgs := map[string]*pkgFiles{} // import path → files
	for _, root := range roots {
		err := filepath.WalkDir(filepath.Join(repo, root), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(repo, filepath.Dir(path))
			if err != nil {
				return err
			}
			importPath := module + "/" + filepath.ToSlash(rel)
			p := pkgs[importPath]
			if p == nil {
				p = &pkgFiles{dir: rel, consts: map[string]string{}, reasonParams: map[string]int{}}
				pkgs[importPath] = p
			}
			p.files = append(p.files, f)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	found := map[string]string{}
	add := func(v string, pos token.Pos) {
		if !reasonPattern.MatchString(v) {
			return
		}
		if _, ok := found[v]; !ok {
			p := fset.Position(pos)
			rel, _ := filepath.Rel(repo, p.Filename)
			found[v] = rel + ":" + strconv.Itoa(p.Line)
		}
	}
	// Pass 1: constants and functions with a reason parameter.
	for _, p := range pkgs {
		for _, f := range p.files {
			for _, decl := range f.Decls {
				switch d := decl.(type) {
				case *ast.GenDecl:
					if d.Tok != token.CONST {
						continue
					}
					for _, spec := range d.Specs {
						vs := spec.(*ast.ValueSpec)
						for i, name := range vs.Names {
							if i < len(vs.Values) {
								if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
									s, _ := strconv.Unquote(lit.Value)
									p.consts[name.Name] = s
									if strings.HasPrefix(name.Name, "Reason") {
										add(s, name.Pos())
									}
								}
							}
						}
					}
				case *ast.FuncDecl:
					if i := reasonParam(d.Type); i >= 0 {
						p.reasonParams[d.Name.Name] = i
					}
				}
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if as, ok := n.(*ast.AssignStmt); ok {
					for i, lhs := range as.Lhs {
						if id, ok := lhs.(*ast.Ident); ok && i < len(as.Rhs) {
							if fl, ok := as.Rhs[i].(*ast.FuncLit); ok {
								if j := reasonParam(fl.Type); j >= 0 {
									p.reasonParams[id.Name] = j
								}
							}
						}
					}
				}
				return true
			})
		}
	}
	// Pass 2: values in reason positions.
	for _, p := range pkgs {
		for _, f := range p.files {
			imports := map[string]string{} // local name → import path
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				name := path[strings.LastIndex(path, "/")+1:]
				if imp.Name != nil {
					name = imp.Name.Name
				}
				imports[name] = path
			}
			var value func(e ast.Expr)
			value = func(e ast.Expr) {
				switch v := e.(type) {
				case *ast.BasicLit:
					if v.Kind == token.STRING {
						s, _ := strconv.Unquote(v.Value)
						add(s, v.Pos())
					}
				case *ast.Ident:
					if s, ok := p.consts[v.Name]; ok {
						add(s, v.Pos())
					}
				case *ast.SelectorExpr:
					if x, ok := v.X.(*ast.Ident); ok {
						if other := pkgs[imports[x.Name]]; other != nil {
							if s, ok := other.consts[v.Sel.Name]; ok {
								add(s, v.Pos())
							}
						}
					}
				case *ast.CallExpr:
					for _, a := range v.Args {
						ast.Inspect(a, func(n ast.Node) bool {
							if lit, ok := n.(*ast.BasicLit); ok {
								value(lit)
							}
							return true
						})
					}
				case *ast.ParenExpr:
					value(v.X)
				}
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.KeyValueExpr:
					if k, ok := x.Key.(*ast.Ident); ok && isReasonName(k.Name) {
						value(x.Value)
					}
				case *ast.AssignStmt:
					for i, lhs := range x.Lhs {
						if i < len(x.Rhs) && len(x.Lhs) == len(x.Rhs) && isReasonName(exprName(lhs)) {
							value(x.Rhs[i])
						}
					}
				case *ast.SwitchStmt:
					if x.Tag != nil && isReasonName(exprName(x.Tag)) {
						for _, s := range x.Body.List {
							for _, e := range s.(*ast.CaseClause).List {
								value(e)
							}
						}
					}
				case *ast.CallExpr:
					if i, ok := p.reasonParams[exprName(x.Fun)]; ok && i < len(x.Args) {
						value(x.Args[i])
					}
				}
				return true
			})
		}
	}
	return found, nil
}

// isReasonName: a field or variable that holds a condition reason.
// (reason, Reason, degradedReason, DeletionReason).
func isReasonName(name string) bool {
	return strings.HasSuffix(name, "Reason") || strings.HasSuffix(name, "reason")
}

// exprName is the name of an identifier or the selected name of x.Sel.
func exprName(e ast.Expr) string {
	switch v := e.(type) {
	case *ast.Ident:
		return v.Name
	case *ast.SelectorExpr:
		return v.Sel.Name
	}
	return ""
}

// reasonParam is the index of a string parameter named reason, or -1.
func reasonParam(ft *ast.FuncType) int {
	i := 0
	for _, field := range ft.Params.List {
		n := len(field.Names)
		if n == 0 {
			n = 1
		}
		for _, name := range field.Names {
			if name.Name == "reason" {
				return i
			}
			i++
		}
		if len(field.Names) == 0 {
			i += n
		}
	}
	return -1
}
