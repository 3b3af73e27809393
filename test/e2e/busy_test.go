//go:build e2e

package e2e_test

import (
	"fmt"
	"net"
	"slices"
	"sort"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
	"github.com/gnmic-operator/gnmic-operator/test/fakecollector"
)

// busyHold is how long a blackholed device holds its collector in the busy scenarios: a few seconds, enough
// to stand out from everything else a collector does (2 ms per change), where the real gNMIc waits about
// 20 s for the handshake's timeout.
const busyHold = 3 * time.Second

// busyFigures are what the busy condition did in a scenario.
type busyFigures struct {
	HoldSeconds float64 `json:"blackholeHoldSeconds"`
	// Blackholes is how many blackholed starts happened, on the pods named in BlackholedPods.
	Blackholes     int      `json:"blackholedStarts"`
	BlackholedPods []string `json:"blackholedPods"`
}

// pickPerPod chooses one target of each pod (the first in name order among those keep accepts) from a
// placement (target → pod), pods in name order.
func pickPerPod(placement map[string]string, keep func(target string) bool) map[string]string {
	byPod := map[string]string{}
	for target, pod := range placement {
		if keep != nil && !keep(target) {
			continue
		}
		if first, ok := byPod[pod]; !ok || target < first {
			byPod[pod] = target
		}
	}
	return byPod
}

// blackholeEach makes the device of each target (pod → target) a blackhole for its next start, for hold.
func blackholeEach(namespace string, targets map[string]string, hold time.Duration) map[string]*harness.Blackhole {
	out := map[string]*harness.Blackhole{}
	for pod, target := range targets {
		out[pod] = collectors.Blackhole(namespace, target, hold)
	}
	return out
}

// awaitBlackholes waits until every blackholed start began and returns, by the pod each was meant for,
// where and when it did.
func awaitBlackholes(holes map[string]*harness.Blackhole, timeout time.Duration) map[string]blackholeStart {
	deadline := time.After(timeout)
	out := map[string]blackholeStart{}
	for pod, b := range holes {
		select {
		case <-b.Started():
		case <-deadline:
			Fail(fmt.Sprintf("the blackholed start of %s (pod %s) did not happen within %s", b.Target, pod, timeout))
		}
		on, at, _ := b.StartedOn()
		out[pod] = blackholeStart{pod: on, at: at}
	}
	return out
}

// blackholeStart is where and when a blackholed start began.
type blackholeStart struct {
	pod string
	at  time.Time
}

func (f *busyFigures) add(holes map[string]*harness.Blackhole) {
	f.HoldSeconds = busyHold.Seconds()
	for _, b := range holes {
		if pod, _, ok := b.StartedOn(); ok {
			f.Blackholes++
			if !slices.Contains(f.BlackholedPods, pod) {
				f.BlackholedPods = append(f.BlackholedPods, pod)
			}
		}
	}
	sort.Strings(f.BlackholedPods)
}

// watchVanishing samples every 20 ms, until the returned function is called, when each of targets is first
// run by no collector of the namespace.
func watchVanishing(namespace string, targets []string) func() map[string]time.Time {
	gone := map[string]time.Time{}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		ticker := time.NewTicker(20 * time.Millisecond)
		defer ticker.Stop()
		for len(gone) < len(targets) {
			h := holdingsOf(namespace)
			now := time.Now()
			for _, t := range targets {
				if _, seen := gone[t]; !seen && len(h[t]) == 0 {
					gone[t] = now
				}
			}
			select {
			case <-stop:
				return
			case <-ticker.C:
			}
		}
	}()
	return func() map[string]time.Time {
		close(stop)
		<-done
		return gone
	}
}

// removalAcknowledged is when a collector acknowledged the apply that removed target from its configuration,
// the first such apply after since.
func removalAcknowledged(c *fakecollector.Collector, target string, since time.Time) (time.Time, bool) {
	for _, a := range c.Applied() {
		if a.Time.Before(since) {
			continue
		}
		for _, removed := range a.Changes.Targets.Removed {
			if removed == target {
				return a.Time, true
			}
		}
	}
	return time.Time{}, false
}

// reconnect changes the port of a Target's address: a connection field, so its collector restarts it.
func reconnect(namespace, target string) {
	t := &operatorv1alpha1.Target{}
	Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: namespace, Name: target}, t)).To(Succeed())
	patch := client.MergeFrom(t.DeepCopy())
	host, port, err := net.SplitHostPort(t.Spec.Address)
	Expect(err).NotTo(HaveOccurred())
	if port == "57400" {
		port = "57401"
	} else {
		port = "57400"
	}
	t.Spec.Address = net.JoinHostPort(host, port)
	Expect(k8sClient.Patch(ctx, t, patch)).To(Succeed())
}
