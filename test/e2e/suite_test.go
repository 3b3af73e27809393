//go:build e2e

// Package e2e_test runs the operator as users install it (config/default's Deployment, or the bundle's
// CSV, each replica run by the harness's pod emulator as its pod would run) against a local control plane
// with the real StatefulSet and HorizontalPodAutoscaler controllers (test/e2e/harness), and measures how
// the autoscaler sizes a collector fleet on the operator's own metrics. Each scenario writes its figures to
// test/e2e/results/<scenario>.json; docs/autoscaling.md shows them.
package e2e_test

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
	k8sClient  client.Client
	collectors *harness.Collectors
)

func TestEndToEnd(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "End-to-end suite")
}

var _ = BeforeSuite(func() {
	// The harness's clients log through controller-runtime: without a logger it prints a stack instead.
	ctrllog.SetLogger(GinkgoLogr)
	ctx, cancel = context.WithCancel(context.Background())
	SetDefaultEventuallyPollingInterval(250 * time.Millisecond)
	logf := func(format string, args ...any) { fmt.Fprintf(GinkgoWriter, "harness: "+format+"\n", args...) }

	var err error
	dir := os.Getenv("E2E_STATE_DIR")
	if dir == "" {
		dir = GinkgoT().TempDir()
	}
	// E2E_POD_CIDR: another suite on the same machine (its fake collectors listen on the pod IPs) needs
	// another loopback range. E2E_OPERATOR_MANIFESTS: config/default (the default) or bundle.
	cp, err = harness.Start(ctx, harness.Options{Dir: dir, PodCIDR: os.Getenv("E2E_POD_CIDR"), Log: logf})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(cp.Stop)
	collectors, err = cp.StartCollectors(ctx)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(collectors.Stop)
	manifests := harness.OperatorManifests(os.Getenv("E2E_OPERATOR_MANIFESTS"))
	// E2E_OPERATOR_ARGS (harness.OperatorArgsFromEnv). E2E_CPU_PROFILE: the operator serves Go's profiling
	// endpoints, for the scenarios that save a CPU profile (cpuProfile).
	args := harness.OperatorArgsFromEnv()
	if os.Getenv("E2E_CPU_PROFILE") != "" {
		args = append(args, "--pprof-bind-address=:"+pprofPort)
	}
	Expect(cp.StartOperator(ctx, harness.OperatorOptions{Manifests: manifests, Args: args})).To(Succeed())
	k8sClient, err = cp.Client()
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	if cancel != nil {
		cancel()
	}
})

// writeResult stores a scenario's figures in test/e2e/results/<name>.json.
func writeResult(name string, figures any) {
	dir := filepath.Join(harness.RepoRoot(), "test", "e2e", "results")
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	data, err := json.MarshalIndent(figures, "", "  ")
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(filepath.Join(dir, name+".json"), append(data, '\n'), 0o644)).To(Succeed())
	fmt.Fprintf(GinkgoWriter, "%s: %s\n", name, data)
}
