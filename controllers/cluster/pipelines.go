package cluster

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/selection"
)

// reportPipelines writes, for each Pipeline of the Cluster, what it selects on its own, whether every
// reference it makes resolves and whether the Cluster's collectors take the Outputs and Inputs it selects;
// then the Accepted condition of the Outputs and Inputs themselves (acceptance.go), and where the Processors
// are used (processors.go).
func (r *Reconciler) reportPipelines(ctx context.Context, cluster *operatorv1alpha1.Cluster, w *world) error {
	m := r.memoryOf(client.ObjectKeyFromObject(cluster))
	verdict := m.verdict
	for i := range w.pipelines {
		if w.pipelines[i].Spec.ClusterRef != cluster.Name {
			continue
		}
		// The listed Pipeline may be the cache's own: it is only read, its status is written from a copy.
		base := &w.pipelines[i]
		p := base.DeepCopy()
		own := m.fleet.Own(base, func() selection.Selection {
			objects := w.objects
			objects.Pipelines = []operatorv1alpha1.Pipeline{*base}
			return selection.Resolve(cluster.Name, objects)
		})
		counts := own.Counts
		p.Status.ObservedGeneration = p.Generation
		p.Status.TargetsCount, p.Status.SubscriptionsCount = counts.Targets, counts.Subscriptions
		p.Status.OutputsCount, p.Status.InputsCount = counts.Outputs, counts.Inputs
		p.Status.ProcessorsCount = counts.Processors
		cond := metav1.Condition{Type: operatorv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Resolved",
			Message: fmt.Sprintf("selects %d target(s), %d subscription(s), %d output(s), %d input(s), %d processor(s) for Cluster %s",
				counts.Targets, counts.Subscriptions, counts.Outputs, counts.Inputs, counts.Processors, cluster.Name),
			ObservedGeneration: p.Generation}
		switch {
		case p.Spec.Enabled != nil && !*p.Spec.Enabled:
			cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, "Disabled", "spec.enabled is false"
		case len(own.Problems) > 0:
			cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, "ReferencesNotFound", strings.Join(first(own.Problems, 10), "; ")
		}
		meta.SetStatusCondition(&p.Status.Conditions, cond)
		if p.Spec.Enabled != nil && !*p.Spec.Enabled {
			meta.RemoveStatusCondition(&p.Status.Conditions, operatorv1alpha1.ConditionConfigurationAccepted)
		} else if accepted := configurationAccepted(p, own, cluster.Name, verdict); accepted != nil {
			meta.SetStatusCondition(&p.Status.Conditions, *accepted)
		}
		if equality.Semantic.DeepEqual(base.Status, p.Status) {
			continue
		}
		if err := r.Status().Patch(ctx, p, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return fmt.Errorf("write status of pipeline %s: %w", p.Name, err)
		}
	}
	if err := r.reportOutputsAndInputs(ctx, cluster, w, verdict, m.outputHealth); err != nil {
		return err
	}
	return r.reportProcessors(ctx, cluster, w)
}
