//go:build e2e

package e2e_test

import (
	"fmt"
	"os"
	"sync"

	. "github.com/onsi/ginkgo/v2"

	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

// pprofPort is where the operator serves Go's profiling endpoints when E2E_CPU_PROFILE is set.
const pprofPort = "6065"

// cpuProfile starts, when E2E_CPU_PROFILE names a file, a CPU profile of every operator replica over the next
// seconds, and gives a wait that returns once it is saved: in that file for a single replica, in
// <file>.<pod> for each of several. Without E2E_CPU_PROFILE it does nothing. Profiling costs the operator a
// little CPU: a scenario's CPU figures are compared between runs that both profile or both do not.
func cpuProfile(seconds int) (wait func()) {
	path := os.Getenv("E2E_CPU_PROFILE")
	if path == "" {
		return func() {}
	}
	var wg sync.WaitGroup
	replicas := cp.OperatorReplicas()
	for _, r := range replicas {
		out := path
		if len(replicas) > 1 {
			out += "." + r.Pod
		}
		wg.Go(func() {
			if err := harness.SaveCPUProfile(r, pprofPort, seconds, out); err != nil {
				fmt.Fprintf(GinkgoWriter, "no CPU profile of %s: %v\n", r.Pod, err)
				return
			}
			fmt.Fprintf(GinkgoWriter, "CPU profile of %s over %d s: %s\n", r.Pod, seconds, out)
		})
	}
	return wg.Wait
}
