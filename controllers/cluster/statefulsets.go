package cluster

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/credentials"
	"github.com/gnmic-operator/gnmic-operator/controllers/owned"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

// ensureStatefulSets makes the Cluster's StatefulSets match the spec: the one named after the Cluster without
// domains, one per domain with the replicas the split gives it otherwise. A StatefulSet the Cluster owns and
// no longer wants (domains added, removed or renamed) is deleted; its pods' targets are placed elsewhere like
// those of any pod that is gone.
func (r *Reconciler) ensureStatefulSets(ctx context.Context, cluster *operatorv1alpha1.Cluster, w *world) error {
	opts := workload.Options{}
	scraped, known := scrapedOutputs(w)
	opts.ScrapedOutputs = scraped
	var want []*appsv1.StatefulSet
	if w.split == nil {
		want = append(want, workload.StatefulSet(cluster, opts))
	} else {
		for i, a := range w.split.result.Domains {
			want = append(want, workload.DomainStatefulSet(cluster, i, int32(a.Desired), opts))
		}
	}
	keep := map[string]bool{}
	for _, sts := range want {
		keep[sts.Name] = true
		if w.apiTLS != nil {
			sts.Spec.Template.Annotations[credentials.APITLSChecksumAnnotation] = w.apiTLS.Checksum
		}
		if err := r.holdOutputPorts(ctx, cluster, sts, known); err != nil {
			return err
		}
		// A StatefulSet of the name that is someone else's (Cluster "a" with domain "b" and Cluster "a-b" both
		// name theirs "a-b") is left alone; the other domains' are still kept.
		if err := w.taken.Keep(owned.Ensure(ctx, r.owned, cluster, sts, &appsv1.StatefulSet{}, func(have, want *appsv1.StatefulSet) {
			have.Spec = want.Spec
		})); err != nil {
			return err
		}
	}
	return r.deleteUnwantedStatefulSets(ctx, cluster, keep)
}

// deleteUnwantedStatefulSets deletes the StatefulSets the Cluster controls whose names are not in keep.
func (r *Reconciler) deleteUnwantedStatefulSets(ctx context.Context, cluster *operatorv1alpha1.Cluster, keep map[string]bool) error {
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

// holdOutputPorts keeps, in want, the output container ports the live StatefulSet of its name has, when
// that leaves its pod template as it is: a port name changes nothing for the collectors (the Services and the
// NetworkPolicy reach the port by number), and a new pod template would roll every collector pod. The ports
// then follow at the next change of the template. While the configuration does not render (known false), the
// live ports are kept whatever else changes.
func (r *Reconciler) holdOutputPorts(ctx context.Context, cluster *operatorv1alpha1.Cluster, want *appsv1.StatefulSet, known bool) error {
	var live appsv1.StatefulSet
	err := r.Get(ctx, client.ObjectKeyFromObject(want), &live)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("get statefulset %s: %w", want.Name, err)
	}
	ports := workload.OutputContainerPorts(&live)
	if !known {
		workload.SetOutputContainerPorts(want, ports)
		return nil
	}
	held := want.DeepCopy()
	workload.SetOutputContainerPorts(held, ports)
	holds, err := owned.Holds(r.owned, cluster, held, &live) // held gets Ensure's annotation: want must not
	if err != nil {
		return err
	}
	if holds {
		workload.SetOutputContainerPorts(want, ports)
	}
	return nil
}
