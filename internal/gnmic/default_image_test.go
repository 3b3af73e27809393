package gnmic_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
)

// gnmicImage finds a reference to a gNMIc image: the repository, a colon and a tag (a sentence's full stop
// after it is not part of the tag).
var gnmicImage = regexp.MustCompile(regexp.QuoteMeta(gnmic.ImageRepository) + `:([0-9A-Za-z_](?:[0-9A-Za-z_.\-]*[0-9A-Za-z_])?)`)

// namesARelease is a tag that names a gNMIc release ("0.47.0", "v0.42.1-rc1") or the moving "latest"; tags
// such as "test" or "next" are placeholders of the suites, which the fake collector answers as its newest.
var namesARelease = regexp.MustCompile(`^(v?[0-9]+\.[0-9]+|latest$)`)

// namesOtherReleases are the files that name older gNMIc images on purpose: the tables of what each release
// answers, the fake collector's releases and the suites that run the operator against them.
var namesOtherReleases = map[string]bool{
	"docs/collectors.md":                                 true,
	"internal/gnmic/releases_test.go":                    true,
	"controllers/collector_versions_test.go":             true,
	"controllers/cluster/collector_api_internal_test.go": true,
	"test/e2e/collector_versions_test.go":                true,
	"test/e2e/harness/collector_release_test.go":         true,
}

// TestEveryFileNamesTheDefaultImage reads every file of the repository: a sample, a doc, the CSV, the chart
// or a test that names a gNMIc image names DefaultImage, so a user who copies any of them runs a collector
// the operator can configure.
func TestEveryFileNamesTheDefaultImage(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the repository root %s has no go.mod: %v", root, err)
	}
	scanned, named := 0, 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") && d.Name() != ".ci" || d.Name() == "bin" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if namesOtherReleases[rel] || !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		scanned++
		for i, line := range strings.Split(string(data), "\n") {
			for _, m := range gnmicImage.FindAllStringSubmatch(line, -1) {
				named++
				if namesARelease.MatchString(m[1]) && m[1] != gnmic.DefaultRelease {
					t.Errorf("%s:%d names %s; samples, docs and tests name %s (internal/gnmic DefaultImage)", rel, i+1, m[0], gnmic.DefaultImage)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The scan must have read the samples and found their image, or it proves nothing.
	if scanned < 100 || named < 10 {
		t.Fatalf("scanned %d files and found %d gNMIc images: the walk missed the repository", scanned, named)
	}
	for rel := range namesOtherReleases {
		if _, err := os.Stat(filepath.Join(root, rel)); err != nil {
			t.Errorf("the allow list names %s, which is gone: %v", rel, err)
		}
	}
}

func TestTheImagePatternFindsTags(t *testing.T) {
	image := gnmic.ImageRepository + ":"
	for _, c := range []struct {
		line, tag string
		release   bool
	}{
		{"  image: " + image + "0.42.0", "0.42.0", true},
		{`Image: "` + image + `latest"}`, "latest", true},
		{"| telemetry   " + image + "v0.47.1 |", "v0.47.1", true},
		{"for example " + image + "0.47.0.", "0.47.0", true},
		{"Image: " + image + "test", "test", false},
		{"Image: " + image + "latest-ish", "latest-ish", false},
		{"image: registry.example/gnmic:0.42.0", "", false},
	} {
		m := gnmicImage.FindStringSubmatch(c.line)
		tag := ""
		if m != nil {
			tag = m[1]
		}
		if tag != c.tag || (tag != "" && namesARelease.MatchString(tag) != c.release) {
			t.Errorf("%q: found tag %q (a release: %t), want %q (a release: %t)", c.line, tag, namesARelease.MatchString(tag), c.tag, c.release)
		}
	}
}
