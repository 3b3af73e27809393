//go:build e2e

// Package olm_test installs, upgrades and uninstalls the operator through a real Operator Lifecycle Manager
// v0 (olm-operator and catalog-operator of hack/olm.sh, run against the harness's local control plane) from a
// file-based catalog that opm serves on loopback, its bundles' manifests inline. The operator's pods, which
// OLM's Deployment asks for, run through the harness's pod emulator with the ServiceAccount OLM created; fake
// collectors stand in for gNMIc. docs/olm.md describes what it proves; the figures go to
// test/e2e/results/olm.json.
package olm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

var (
	ctx        context.Context
	cancel     context.CancelFunc
	cp         *harness.ControlPlane
	olm        *harness.OLM
	watch      *harness.OLMWatch
	catalog    *harness.Catalog
	k8sClient  client.Client
	collectors *harness.Collectors
	// bundle is the bundle installed first (bundle/), upgrade the one that replaces it (0.1.1 of
	// make olm-upgrade-bundle).
	bundle, upgrade string
)

func TestOLM(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "OLM suite")
}

var _ = BeforeSuite(func() {
	// make test-e2e runs every package under test/e2e: this suite needs OLM's binaries and runs with make
	// test-olm, which names them.
	if os.Getenv("E2E_OLM_BIN_DIR") == "" {
		Skip("the OLM suite runs with make test-olm (E2E_OLM_BIN_DIR names the binaries of hack/olm.sh)")
	}
	ctx, cancel = context.WithCancel(context.Background())
	ctrllog.SetLogger(GinkgoLogr)
	SetDefaultEventuallyPollingInterval(250 * time.Millisecond)
	logf := func(format string, args ...any) {
		fmt.Fprintf(GinkgoWriter, "%s harness: "+format+"\n", append([]any{time.Now().Format("15:04:05.0")}, args...)...)
	}
	bundle = envPath("E2E_OLM_BUNDLE", "bundle")
	upgrade = envPath("E2E_OLM_UPGRADE_BUNDLE", filepath.Join("bin", "olm-bundles", "0.1.1"))
	for _, dir := range []string{bundle, upgrade} {
		_, err := os.Stat(filepath.Join(dir, "manifests"))
		Expect(err).NotTo(HaveOccurred(), "bundle directory %s (make olm-upgrade-bundle writes the upgrade bundle)", dir)
	}

	// E2E_STATE_DIR keeps the state and logs of the run (make test-olm: .e2e/olm/), else a temporary one.
	dir := GinkgoT().TempDir()
	var err error
	if root := os.Getenv("E2E_STATE_DIR"); root != "" {
		Expect(os.MkdirAll(root, 0o755)).To(Succeed())
		dir, err = os.MkdirTemp(root, "olm-")
		Expect(err).NotTo(HaveOccurred())
	}
	// No operator CRDs: OLM installs them from the bundle.
	cp, err = harness.Start(ctx, harness.Options{Dir: dir, PodCIDR: os.Getenv("E2E_POD_CIDR"), Nodes: 2, Log: logf, WithoutCRDs: true})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(cp.Stop)
	collectors, err = cp.StartCollectors(ctx)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(collectors.Stop)

	started := time.Now()
	olm, err = cp.StartOLM(ctx, harness.OLMOptions{})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(olm.Stop)
	logf("OLM (olm-operator, catalog-operator) running after %s", time.Since(started).Round(100*time.Millisecond))
	watch, err = olm.WatchOLM(ctx, logf)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(watch.Stop)
	k8sClient = olm.Client()

	started = time.Now()
	catalog, err = olm.ServeCatalog(ctx, "gnmic-operator", harness.CatalogBundle{Dir: bundle})
	Expect(err).NotTo(HaveOccurred())
	logf("catalog %s READY at %s after %s", catalog.Name, catalog.Address(), time.Since(started).Round(100*time.Millisecond))
})

var _ = AfterSuite(func() {
	if cancel != nil {
		cancel()
	}
})

// envPath is $name, or def from the repository root; a relative path is taken from the repository root.
func envPath(name, def string) string {
	path := os.Getenv(name)
	if path == "" {
		path = def
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(harness.RepoRoot(), path)
	}
	return filepath.Clean(path)
}

// writeResult stores the suite's figures in test/e2e/results/<name>.json.
func writeResult(name string, figures any) {
	dir := filepath.Join(harness.RepoRoot(), "test", "e2e", "results")
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	data, err := json.MarshalIndent(figures, "", "  ")
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(filepath.Join(dir, name+".json"), append(data, '\n'), 0o644)).To(Succeed())
	fmt.Fprintf(GinkgoWriter, "%s: %s\n", name, data)
}
