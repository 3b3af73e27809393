package controllers

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/credentials"
	"github.com/gnmic-operator/gnmic-operator/internal/balance"
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
func (r *ClusterReconciler) splitOverDomains(cluster *operatorv1alpha1.Cluster, w *world) error {
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
	split := &domainSplit{input: domainInput(cluster), pods: make([]domainPods, len(cluster.Spec.Domains))}
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

// domainInput is the Cluster's domains and policy as the split's input, without pod counts.
func domainInput(cluster *operatorv1alpha1.Cluster) domains.Input {
	in := domains.Input{Replicas: int(workload.Replicas(cluster))}
	if p := cluster.Spec.DomainPolicy; p != nil {
		in.Policy = balance.Policy(p.Name)
		if p.Priority != nil {
			in.Order = p.Priority.TargetOrder
		}
		if p.Proportional != nil {
			in.Proportions = map[string]int{}
			for name, share := range p.Proportional.TargetProportions {
				in.Proportions[name] = int(share)
			}
		}
		if p.Fallback != nil {
			in.StartupTimeout = p.Fallback.StartupTimeout.Duration
		}
	}
	for _, d := range cluster.Spec.Domains {
		minimum, maximum := workload.DomainReplicaLimits(d)
		in.Domains = append(in.Domains, domains.Domain{Name: d.Name, Min: minimum, Max: maximum})
	}
	return in
}

// ensureStatefulSets makes the Cluster's StatefulSets match the spec: the one named after the Cluster without
// domains, one per domain with the replicas the split gives it otherwise. A StatefulSet the Cluster owns and
// no longer wants (domains added, removed or renamed) is deleted; its pods' targets are placed elsewhere like
// those of any pod that is gone.
func (r *ClusterReconciler) ensureStatefulSets(ctx context.Context, cluster *operatorv1alpha1.Cluster, w *world) error {
	var want []*appsv1.StatefulSet
	if w.split == nil {
		want = append(want, workload.StatefulSet(cluster, workload.Options{}))
	} else {
		for i, a := range w.split.result.Domains {
			want = append(want, workload.DomainStatefulSet(cluster, i, int32(a.Desired), workload.Options{}))
		}
	}
	keep := map[string]bool{}
	for _, sts := range want {
		keep[sts.Name] = true
		if err := r.refuseAnotherClustersStatefulSet(ctx, cluster, sts.Name); err != nil {
			return err
		}
		if w.apiTLS != nil {
			sts.Spec.Template.Annotations[credentials.APITLSChecksumAnnotation] = w.apiTLS.Checksum
		}
		if err := ensureOwned(ctx, r, cluster, sts, &appsv1.StatefulSet{}, func(have, want *appsv1.StatefulSet) {
			have.Spec = want.Spec
		}); err != nil {
			return err
		}
	}
	return r.deleteUnwantedStatefulSets(ctx, cluster, keep)
}

// refuseAnotherClustersStatefulSet fails when the StatefulSet the Cluster wants is controlled by another
// Cluster: Cluster "a" with domain "b" and Cluster "a-b" both name theirs "a-b". Rewriting it would fail (a
// StatefulSet's selector cannot change) with an error that does not say why; the event says why. A
// StatefulSet controlled by a Cluster of the same name (deleted and created again, its StatefulSet not
// collected yet) is taken over as before.
func (r *ClusterReconciler) refuseAnotherClustersStatefulSet(ctx context.Context, cluster *operatorv1alpha1.Cluster, name string) error {
	var have appsv1.StatefulSet
	err := r.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: name}, &have)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("get statefulset %s: %w", name, err)
	}
	owner := metav1.GetControllerOf(&have)
	if owner == nil || owner.Kind != "Cluster" || owner.Name == cluster.Name {
		return nil
	}
	r.Recorder.Eventf(cluster, corev1.EventTypeWarning, operatorv1alpha1.EventStatefulSetNameTaken,
		"StatefulSet %s belongs to Cluster %s: rename the domain (or that Cluster)", name, owner.Name)
	return fmt.Errorf("statefulset %s belongs to cluster %s, not to %s", name, owner.Name, cluster.Name)
}

// deleteUnwantedStatefulSets deletes the StatefulSets the Cluster controls whose names are not in keep.
func (r *ClusterReconciler) deleteUnwantedStatefulSets(ctx context.Context, cluster *operatorv1alpha1.Cluster, keep map[string]bool) error {
	var list appsv1.StatefulSetList
	if err := r.List(ctx, &list, client.InNamespace(cluster.Namespace), client.MatchingLabels(workload.Labels(cluster))); err != nil {
		return fmt.Errorf("list statefulsets of cluster %s: %w", cluster.Name, err)
	}
	for i := range list.Items {
		sts := &list.Items[i]
		owner := metav1.GetControllerOf(sts)
		if keep[sts.Name] || owner == nil || owner.UID != cluster.UID || !sts.DeletionTimestamp.IsZero() {
			continue
		}
		log.FromContext(ctx).Info("deleting", "kind", "StatefulSet", "name", sts.Name, "why", "no domain of the Cluster runs it")
		if err := r.Delete(ctx, sts); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete statefulset %s: %w", sts.Name, err)
		}
	}
	return nil
}

// domainBlockAt is when a domain's waiting pods reach the startup timeout (zero without domains, a fallback or
// a waiting domain): the split changes then although no pod does.
func (w *world) domainBlockAt() time.Time {
	if w.split == nil {
		return time.Time{}
	}
	return w.split.blockAt
}
