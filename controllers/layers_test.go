package controllers_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gnmic-operator/gnmic-operator/test/testenv"
)

const module = "github.com/gnmic-operator/gnmic-operator/"

// moduleImports are the packages of this module that each package of it imports (its non-test files only),
// by path relative to the module root.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	root := testenv.RepoRoot()
	out := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && (name == "bin" || name == "vendor" || (strings.HasPrefix(name, ".") && path != root)) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		for _, spec := range file.Imports {
			imported, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return err
			}
			if rel, ok := strings.CutPrefix(imported, module); ok && !slices.Contains(out[dir], rel) {
				out[dir] = append(out[dir], rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// dependencies are every package of this module that pkg imports, directly or not.
func dependencies(imports map[string][]string, pkg string) []string {
	var out []string
	next := slices.Clone(imports[pkg])
	for len(next) > 0 {
		p := next[0]
		next = next[1:]
		if slices.Contains(out, p) {
			continue
		}
		out = append(out, p)
		next = append(next, imports[p]...)
	}
	return out
}

// The packages of controllers/ point down (docs/development.md): the runtime machinery (sharding, the
// collector client, credentials, owned objects) never reaches a reconciler, the Balancer knows neither the
// Cluster reconciler nor sharding, and the pure cores know no controller at all.
func TestControllerPackagesPointDown(t *testing.T) {
	imports := moduleImports(t)
	if len(dependencies(imports, "controllers/cluster")) == 0 {
		t.Fatal("controllers/cluster imports nothing of the module: the walk found no package")
	}
	forbidden := map[string][]string{
		"controllers/sharding":     {"controllers/cluster", "controllers/balancer"},
		"controllers/collector":    {"controllers/cluster", "controllers/balancer", "controllers/sharding"},
		"controllers/credentials":  {"controllers/cluster", "controllers/balancer", "controllers/sharding"},
		"controllers/owned":        {"controllers/cluster", "controllers/balancer", "controllers/sharding"},
		"controllers/conflict":     {"controllers/cluster", "controllers/balancer", "controllers/sharding"},
		"controllers/balancer":     {"controllers/cluster", "controllers/sharding"},
		"controllers/tunnelpolicy": {"controllers/cluster", "controllers/balancer", "controllers/sharding"},
		"controllers/targetsource": {"controllers/cluster", "controllers/balancer", "controllers/sharding"},
	}
	for pkg := range imports {
		if strings.HasPrefix(pkg, "internal/") {
			forbidden[pkg] = []string{"controllers"}
		}
	}
	for pkg, never := range forbidden {
		for _, dep := range dependencies(imports, pkg) {
			for _, n := range never {
				if dep == n || strings.HasPrefix(dep, n+"/") {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}
