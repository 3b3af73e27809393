package monitoring

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const operatorModule = "github.com/gnmic-operator/gnmic-operator"

// goList runs go list -deps in dir and returns "importpath dir" lines.
func goList(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-deps", "-f", "{{.ImportPath}} {{.Dir}}"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list in %s: %v", dir, err)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// The inventory is only complete if this test binary links every package of the operator that registers
// metrics: a package main imports and this module does not would add families no check would see.
func TestTheInventoryLinksEveryOperatorPackageThatRegistersMetrics(t *testing.T) {
	linked := map[string]bool{}
	for _, line := range goList(t, ".", "-test", ".") {
		linked[strings.Fields(line)[0]] = true
	}
	registering := 0
	for _, line := range goList(t, "../..", ".") {
		fields := strings.Fields(line)
		if len(fields) != 2 || !strings.HasPrefix(fields[0], operatorModule+"/") {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(fields[1], "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(src), "metrics.Registry") {
				registering++
				if !linked[fields[0]] {
					t.Errorf("%s registers metrics (%s) but the inventory does not import it: add it to inventory_test.go",
						fields[0], filepath.Base(f))
				}
				break
			}
		}
	}
	if registering < 3 {
		t.Fatalf("found %d operator packages registering metrics, expected fleetmetrics, metricsadapter, sharding at least", registering)
	}
}
