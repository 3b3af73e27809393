//go:build e2e

// Package sharding runs the operator sharded (--sharding) with three replicas from config/default through the
// pod emulator, on its own local control plane, and kills, pauses and rolls its replicas.
package sharding

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

// leaseDuration is the replicas' --shard-lease-duration.
const leaseDuration = 6 * time.Second

var (
	ctx        context.Context
	cancel     context.CancelFunc
	cp         *harness.ControlPlane
	k8sClient  client.Client
	collectors *harness.Collectors
)

func TestSharding(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Sharding suite")
}

var _ = BeforeSuite(func() {
	// The harness's clients log through controller-runtime: without a logger it prints a stack instead.
	ctrllog.SetLogger(GinkgoLogr)
	ctx, cancel = context.WithCancel(context.Background())
	SetDefaultEventuallyPollingInterval(250 * time.Millisecond)
	logf := func(format string, args ...any) { fmt.Fprintf(GinkgoWriter, "harness: "+format+"\n", args...) }
	dir := os.Getenv("E2E_STATE_DIR")
	if dir == "" {
		dir = GinkgoT().TempDir()
	}
	var err error
	cp, err = harness.Start(ctx, harness.Options{Dir: dir, PodCIDR: os.Getenv("E2E_POD_CIDR"), Nodes: 4, Log: logf,
		AuditOperator: true})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(cp.Stop)
	collectors, err = cp.StartCollectors(ctx)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(collectors.Stop)
	Expect(cp.StartOperator(ctx, harness.OperatorOptions{
		Manifests: harness.ConfigDefault,
		Args:      []string{"--sharding", "--shard-lease-duration=" + leaseDuration.String()},
		Replicas:  3,
	})).To(Succeed())
	k8sClient, err = cp.Client()
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	if cancel != nil {
		cancel()
	}
})
