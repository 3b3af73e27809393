//go:build e2e

package e2e_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

// livePlan is the JSON answer of `gnmic-operator plan --cluster` (docs/planning.md), decoded strictly.
type livePlan struct {
	Cluster     string      `json:"cluster"`
	Replicas    nowAndAfter `json:"replicas"`
	PodCapacity nowAndAfter `json:"podCapacity"`
	Capacity    int         `json:"capacity"`
	Pods        []struct {
		Name         string   `json:"name"`
		DesiredNow   bool     `json:"desiredNow"`
		DesiredAfter bool     `json:"desiredAfter"`
		Now          []string `json:"now"`
		After        []string `json:"after"`
	} `json:"pods"`
	UnassignedNow   []string `json:"unassignedNow"`
	UnassignedAfter []string `json:"unassignedAfter"`
	Skipped         []string `json:"skipped"`
	Moves           []struct {
		Target string `json:"target"`
		From   string `json:"from"`
		To     string `json:"to"`
	} `json:"moves"`
	LowerBoundMoves int `json:"lowerBoundMoves"`
}

type nowAndAfter struct {
	Now   int `json:"now"`
	After int `json:"after"`
}

// placed maps each target to its pod, as the plan says now or after.
func (p livePlan) placed(after bool) map[string]string {
	out := map[string]string{}
	for _, pod := range p.Pods {
		targets := pod.Now
		if after {
			targets = pod.After
		}
		for _, t := range targets {
			out[t] = pod.Name
		}
	}
	return out
}

// planResult is what test/e2e/results/plan.json holds: per change, the moves the plan predicted, their
// lower bound, the moves the operator made, and how many targets ended elsewhere than planned (the promise
// is 0).
type planResult struct {
	Scenario string       `json:"scenario"`
	Targets  int          `json:"targets"`
	Changes  []planChange `json:"changes"`
}

type planChange struct {
	Change          string  `json:"change"`
	PlannedMoves    int     `json:"plannedMoves"`
	LowerBoundMoves int     `json:"lowerBoundMoves"`
	MadeMoves       int     `json:"madeMoves"`
	Unassigned      int     `json:"unassigned"`
	NotAsPlanned    int     `json:"targetsNotAsPlanned"`
	SecondsToSettle float64 `json:"secondsToSettle"`
}

// Issue 29 item 5: `plan --cluster`, the shipped binary run with a kubeconfig as a user runs it, predicts
// exactly where the running operator puts every target when the change is then applied.
var _ = Describe("plan --cluster against a running operator", Ordered, func() {
	const (
		ns      = "live-plan"
		targets = 60
	)
	fleet := harness.Fleet{Namespace: ns, Cluster: "telemetry", Replicas: 3}
	result := planResult{Scenario: "plan", Targets: targets}
	AfterAll(func() { writeResult("plan", result) })

	It("places 60 targets on 3 pods, and plans no move when nothing changes", func() {
		Expect(fleet.Create(ctx, cp, k8sClient)).To(Succeed())
		Expect(fleet.AddTargets(ctx, k8sClient, 0, targets)).To(Succeed())
		expectPlaced(fleet, targets)
		now := settledPlacement(fleet, 3, 0)
		p := runLivePlan(fleet)
		Expect(p.Cluster).To(Equal(ns + "/telemetry"))
		Expect(p.placed(false)).To(Equal(now), "the plan's now is where the collectors run the targets")
		Expect(p.placed(true)).To(Equal(now))
		Expect(p.Moves).To(BeEmpty())
	})

	It("predicts the moves of a scale from 3 to 4 pods", func() {
		result.Changes = append(result.Changes, applyPlanned(fleet, "replicas 3 -> 4", 4, 0, []string{"--replicas", "4"},
			func() { scale(fleet, 4) }))
	})

	It("predicts the moves of a scale from 4 to 2 pods", func() {
		result.Changes = append(result.Changes, applyPlanned(fleet, "replicas 4 -> 2", 2, 0, []string{"--replicas", "2"},
			func() { scale(fleet, 2) }))
	})

	It("predicts which targets a podCapacity of 25 leaves unassigned", func() {
		change := applyPlanned(fleet, "podCapacity automatic -> 25", 2, 10, []string{"--pod-capacity", "25"},
			func() { setPodCapacity(fleet, ptr.To[int32](25)) })
		Expect(change.Unassigned).To(Equal(10))
		result.Changes = append(result.Changes, change)
	})

	It("predicts where the unassigned targets go when a third pod comes back with podCapacity 25", func() {
		change := applyPlanned(fleet, "replicas 2 -> 3 at podCapacity 25", 3, 0, []string{"--replicas", "3"},
			func() { scale(fleet, 3) })
		result.Changes = append(result.Changes, change)
	})

	It("predicts the moves of going back to automatic capacity", func() {
		result.Changes = append(result.Changes, applyPlanned(fleet, "podCapacity 25 -> automatic", 3, 0, []string{"--pod-capacity", "0"},
			func() { setPodCapacity(fleet, nil) }))
	})
})

// applyPlanned plans a change with args, applies it, waits until the fleet settles on replicas pods with
// unassigned targets left over, and expects every target on the pod (or on none) the plan said.
func applyPlanned(f harness.Fleet, name string, replicas, unassigned int, args []string, apply func()) planChange {
	GinkgoHelper()
	before := settledPlacement(f, int(*getCluster(Default, f).Spec.Replicas), -1)
	p := runLivePlan(f, args...)
	Expect(p.placed(false)).To(Equal(before), "the plan's now is where the collectors run the targets")
	Expect(p.UnassignedAfter).To(HaveLen(unassigned))
	planned := p.placed(true)

	start := time.Now()
	apply()
	after := settledPlacement(f, replicas, unassigned)
	change := planChange{Change: name, PlannedMoves: len(p.Moves), LowerBoundMoves: p.LowerBoundMoves,
		Unassigned: len(p.UnassignedAfter), SecondsToSettle: time.Since(start).Seconds()}
	for t, pod := range before {
		if after[t] != pod {
			change.MadeMoves++
		}
	}
	for t := range after {
		if planned[t] != after[t] {
			change.NotAsPlanned++
		}
	}
	for t := range planned {
		if _, ok := after[t]; !ok {
			change.NotAsPlanned++
		}
	}
	GinkgoWriter.Printf("%s: planned %d moves (lower bound %d), made %d, %d targets not as planned\n",
		name, change.PlannedMoves, change.LowerBoundMoves, change.MadeMoves, change.NotAsPlanned)
	Expect(after).To(Equal(planned), "every target on the pod the plan said")
	Expect(unassignedTargets(f)).To(Equal(p.UnassignedAfter), "the targets the plan left unassigned")
	Expect(change.MadeMoves).To(Equal(change.PlannedMoves))
	return change
}

// settledPlacement waits until the fleet is settled and returns each assigned target's pod: replicas pods
// Ready, unassigned targets (-1: any number) run by no collector, every other target run by exactly one
// collector, the one its status names, Assigned, with no lastPod; and the same for two seconds.
func settledPlacement(f harness.Fleet, replicas, unassigned int) map[string]string {
	GinkgoHelper()
	var placed map[string]string
	look := func(g Gomega) map[string]string {
		c := getCluster(g, f)
		g.Expect(c.Status.ObservedGeneration).To(Equal(c.Generation))
		g.Expect(c.Status.ReadyReplicas).To(BeEquivalentTo(replicas))
		pods := collectorPods(g, f)
		g.Expect(pods).To(HaveLen(replicas))
		for _, p := range pods {
			g.Expect(podReady(&p)).To(BeTrue(), "pod %s not Ready", p.Name)
		}
		h := holdingsOf(f.Namespace)
		g.Expect(h.duplicated()).To(BeZero(), "targets on two collectors")
		held := h.placement()
		var list operatorv1alpha1.TargetList
		g.Expect(k8sClient.List(ctx, &list, client.InNamespace(f.Namespace))).To(Succeed())
		none := 0
		for _, t := range list.Items {
			st := t.Status.ClusterStates[f.Cluster]
			if st.State == operatorv1alpha1.TargetUnassigned {
				none++
				g.Expect(held).NotTo(HaveKey(t.Name), "unassigned target %s still collected", t.Name)
				continue
			}
			g.Expect(st.State).To(Equal(operatorv1alpha1.TargetAssigned), "target %s", t.Name)
			g.Expect(st.LastPod).To(BeEmpty(), "target %s: on a pod of a settled fleet, none is away from home", t.Name)
			g.Expect(held[t.Name]).To(Equal(st.Pod), "target %s", t.Name)
		}
		if unassigned >= 0 {
			g.Expect(none).To(Equal(unassigned), "unassigned targets")
		}
		g.Expect(held).To(HaveLen(len(list.Items) - none))
		return held
	}
	Eventually(func(g Gomega) { placed = look(g) }).WithTimeout(2 * time.Minute).WithPolling(500 * time.Millisecond).Should(Succeed())
	Consistently(func(g Gomega) { g.Expect(look(g)).To(Equal(placed)) }).WithTimeout(2 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())
	return placed
}

// unassignedTargets are the names of the fleet's targets whose status says Unassigned, sorted.
func unassignedTargets(f harness.Fleet) []string {
	GinkgoHelper()
	var list operatorv1alpha1.TargetList
	Expect(k8sClient.List(ctx, &list, client.InNamespace(f.Namespace))).To(Succeed())
	out := []string{}
	for _, t := range list.Items {
		if t.Status.ClusterStates[f.Cluster].State == operatorv1alpha1.TargetUnassigned {
			out = append(out, t.Name)
		}
	}
	sort.Strings(out)
	return out
}

// runLivePlan runs the operator's binary, `plan --cluster` with the control plane's kubeconfig and args,
// and decodes its JSON answer strictly.
func runLivePlan(f harness.Fleet, args ...string) livePlan {
	GinkgoHelper()
	binary := os.Getenv("E2E_OPERATOR_BINARY")
	if binary == "" {
		binary = "bin/manager"
	}
	if !filepath.IsAbs(binary) {
		binary = filepath.Join(harness.RepoRoot(), binary)
	}
	cmd := exec.Command(binary, append([]string{"plan", "--cluster", f.Namespace + "/" + f.Cluster,
		"--kubeconfig", cp.Kubeconfig, "-o", "json"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	Expect(cmd.Run()).To(Succeed(), "%s plan: %s", binary, stderr.String())
	Expect(stderr.String()).To(BeEmpty())
	GinkgoWriter.Printf("plan %s\n%s", strings.Join(args, " "), stdout.String())
	var p livePlan
	dec := json.NewDecoder(&stdout)
	dec.DisallowUnknownFields()
	Expect(dec.Decode(&p)).To(Succeed())
	return p
}

// setPodCapacity sets (nil: removes) the Cluster's spec.targetDistribution.podCapacity.
func setPodCapacity(f harness.Fleet, capacity *int32) {
	GinkgoHelper()
	c := getCluster(Default, f)
	patch := client.MergeFrom(c.DeepCopy())
	c.Spec.TargetDistribution.PodCapacity = capacity
	Expect(k8sClient.Patch(ctx, c, patch)).To(Succeed())
}
