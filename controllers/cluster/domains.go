package cluster

import (
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/clusterplacement"
	"github.com/gnmic-operator/gnmic-operator/internal/domains"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

// domainSplit is how a Cluster with domains spreads its replicas over them in this reconcile: what each
// domain's pods do, and what the core decided.
type domainSplit struct {
	input  domains.Input
	result domains.Result
	// pods counts each domain's pods, in spec.domains order.
	pods []domainPods
	// blockAt is when a domain whose pods wait now becomes blocked if they keep waiting (zero when none).
	blockAt time.Time
}

// domainPods is what one domain's pods do, as the split counts them.
type domainPods struct {
	current, ready, notStarted int32
	// notStartedSince is when the longest-waiting not-started pod began to wait.
	notStartedSince time.Time
}

// splitOverDomains decides how many pods each domain of the Cluster runs, from what the domains' pods do, and
// records the desired pods in the world. A pod has started when its collector runs (containers ready, on a
// Node that is not lost); every other pod of the domain that is not terminating has not, and waits since its
// creation or since it stopped being ready. A Cluster without domains desires pods 0..replicas-1 as always.
//
// A domain waits from its oldest not-started pod, and goes on waiting while any of its pods has not started,
// including desired pods that do not exist (domains.WaitingSince): recreating a pod does not restart the
// startup timeout.
func (r *Reconciler) splitOverDomains(cluster *operatorv1alpha1.Cluster, w *world) error {
	now := r.now()
	memory := r.memoryOf(client.ObjectKeyFromObject(cluster))
	if len(cluster.Spec.Domains) == 0 {
		// Forget the domains' waits: domains added again later start from what their pods do then.
		memory.domainWaits, memory.domainDesired = nil, nil
		ordinals := make([]int, workload.Replicas(cluster))
		for o := range ordinals {
			ordinals[o] = o
		}
		w.split = nil
		w.setDesired(ordinals)
		return nil
	}
	split := &domainSplit{input: clusterplacement.DomainInput(cluster), pods: make([]domainPods, len(cluster.Spec.Domains))}
	for slot, pod := range w.pods {
		index, _ := domains.Locate(slot)
		if index >= len(split.pods) {
			continue
		}
		c := &split.pods[index]
		c.current++
		ready, since := podReadiness(pod)
		if l, lost := w.lost[slot]; lost && !l.silent {
			ready, since = false, l.since
		}
		if ready {
			c.ready++
			continue
		}
		c.notStarted++
		if c.notStartedSince.IsZero() || since.Before(c.notStartedSince) {
			c.notStartedSince = since
		}
	}
	waits := map[string]time.Time{}
	for i, c := range split.pods {
		d := &split.input.Domains[i]
		missing := max(memory.domainDesired[d.Name]-int(c.current), 0)
		d.Started, d.NotStarted = int(c.ready), int(c.notStarted)+missing
		since := domains.WaitingSince(memory.domainWaits[d.Name], d.NotStarted, c.notStartedSince, now)
		if !since.IsZero() {
			waits[d.Name] = since
			d.Waiting = max(now.Sub(since), 0)
			split.pods[i].notStartedSince = since
		}
	}
	result, err := domains.Split(split.input)
	if err != nil {
		return err
	}
	memory.domainWaits = waits
	memory.domainDesired = map[string]int{}
	for _, a := range result.Domains {
		memory.domainDesired[a.Name] = a.Desired
	}
	split.result = result
	if next := domains.NextBlock(split.input); next > 0 {
		split.blockAt = now.Add(next)
	}
	w.split = split
	w.setDesired(result.Slots())
	return nil
}

// setDesired records the ordinals of the pods the Cluster should run.
func (w *world) setDesired(ordinals []int) {
	w.desired = ordinals
	w.desiredSet = make(map[int]bool, len(ordinals))
	for _, o := range ordinals {
		w.desiredSet[o] = true
	}
}

// domainBlockAt is when a domain's waiting pods reach the startup timeout (zero without domains, a fallback or
// a waiting domain): the split changes then although no pod does.
func (w *world) domainBlockAt() time.Time {
	if w.split == nil {
		return time.Time{}
	}
	return w.split.blockAt
}
