package cluster

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/rejection"
)

// Bounds of the messages written to status: the API server refuses longer ones.
const (
	maxConditionMessage = 8192
	maxRejectionMessage = 4096
)

// acceptance is the status every Output and Input carries, by reference.
type acceptance struct {
	kind, name         string
	generation         int64
	observedGeneration *int64
	conditions         *[]metav1.Condition
	rejectedBy         *[]operatorv1alpha1.ConfigurationRejection
	failedOn           *[]operatorv1alpha1.ComponentFailure
	secretRefs         []operatorv1alpha1.ConfigSecretRef
	eventProcessors    []string
	// config is nil for Inputs: only an Output's templates are judged (output_templates.go).
	config map[string]apiextensionsv1.JSON
	// portConflicts is nil for Inputs (port_conflicts.go).
	portConflicts *[]operatorv1alpha1.ConfigurationRejection
}

func outputAcceptance(o *operatorv1alpha1.Output) acceptance {
	return acceptance{kind: rejection.KindOutput, name: o.Name, generation: o.Generation,
		observedGeneration: &o.Status.ObservedGeneration, conditions: &o.Status.Conditions, rejectedBy: &o.Status.RejectedBy,
		failedOn: &o.Status.FailedOn, secretRefs: o.Spec.SecretRefs, eventProcessors: o.Spec.EventProcessors,
		portConflicts: &o.Status.PortConflicts, config: o.Spec.Config}
}

func inputAcceptance(in *operatorv1alpha1.Input) acceptance {
	return acceptance{kind: rejection.KindInput, name: in.Name, generation: in.Generation,
		observedGeneration: &in.Status.ObservedGeneration, conditions: &in.Status.Conditions, rejectedBy: &in.Status.RejectedBy,
		failedOn: &in.Status.FailedOn, secretRefs: in.Spec.SecretRefs, eventProcessors: in.Spec.EventProcessors}
}

// reportOutputsAndInputs keeps this Cluster's entry in the rejectedBy list of every Output and Input of the
// namespace (present while its collectors refuse a configuration the object is blamed for) and in its
// failedOn list (present while collectors report it failed to start, output_health.go), drops entries of
// Clusters that no longer exist, and sets each object's Accepted and Running conditions from the lists, the
// SecretsResolved condition of those with spec.secretRefs (secret_refs.go), the ProcessorsResolved condition
// of those with spec.eventProcessors (processors.go) and the TemplatesSupported condition of Outputs with
// templates (output_templates.go), emitting GomplateRemoved on an Output whose templates turn unsupported.
func (r *Reconciler) reportOutputsAndInputs(ctx context.Context, cluster *operatorv1alpha1.Cluster, w *world, v sharedVerdict,
	h outputHealth) error {
	if w.renderErr != nil {
		return nil // which objects the Cluster sends is not known
	}
	var list operatorv1alpha1.ClusterList
	// Only their names are read.
	if err := r.List(ctx, &list, client.InNamespace(cluster.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return fmt.Errorf("list clusters: %w", err)
	}
	exists := map[string]bool{cluster.Name: true}
	for _, c := range list.Items {
		exists[c.Name] = true
	}
	sent := func(kind, name string) bool {
		if kind == rejection.KindOutput {
			_, ok := w.rendered.Outputs[name]
			return ok
		}
		_, ok := w.rendered.Inputs[name]
		return ok
	}
	unsupportedTemplates := map[string]string{} // Output name → the event's message
	err := r.writeAcceptance(ctx, w.objects.Outputs, w.objects.Inputs, func(a acceptance) {
		judge(a, cluster.Name, sent(a.kind, a.name), exists, v)
		if h.watched {
			judgeRunning(a, cluster.Name, sent(a.kind, a.name), exists, h)
		}
		setSecretsResolved(a, w)
		setProcessorsResolved(a, w)
		if msg := setTemplatesSupported(a, w); msg != "" {
			unsupportedTemplates[a.name] = msg
		}
		conflict, listens := w.portVerdict(a.name)
		judgePort(a, cluster.Name, conflict, listens, exists)
	})
	if err != nil {
		return err
	}
	// Only once the status that says so is written: a failed write retries, and judges again.
	for i := range w.objects.Outputs {
		if o := &w.objects.Outputs[i]; unsupportedTemplates[o.Name] != "" {
			r.Recorder.Event(o, corev1.EventTypeWarning, operatorv1alpha1.EventGomplateRemoved, unsupportedTemplates[o.Name])
		}
	}
	return nil
}

// removeFromRejections removes a deleted Cluster's entries from the rejectedBy and failedOn lists of the namespace's Outputs
// and Inputs, writing those that had one.
func (r *Reconciler) removeFromRejections(ctx context.Context, deleted types.NamespacedName) error {
	namespace, cluster := deleted.Namespace, deleted.Name
	var outputs operatorv1alpha1.OutputList
	var inputs operatorv1alpha1.InputList
	for _, l := range []client.ObjectList{&outputs, &inputs} {
		// writeAcceptance copies what it changes.
		if err := r.List(ctx, l, client.InNamespace(namespace), client.UnsafeDisableDeepCopy); err != nil {
			return fmt.Errorf("list outputs and inputs: %w", err)
		}
	}
	return r.writeAcceptance(ctx, outputs.Items, inputs.Items, func(a acceptance) {
		judge(a, cluster, false, nil, sharedVerdict{})
		judgeRunning(a, cluster, false, nil, outputHealth{})
		judgePort(a, cluster, nil, false, nil)
	})
}

// writeAcceptance applies update to a copy of the status of every Output and Input, and writes those whose
// status changed: an unchanged fleet costs no write. The objects given may be the cache's own: they are only
// read.
func (r *Reconciler) writeAcceptance(ctx context.Context, outputs []operatorv1alpha1.Output,
	inputs []operatorv1alpha1.Input, update func(acceptance)) error {
	for i := range outputs {
		base := &outputs[i]
		o := base.DeepCopy()
		update(outputAcceptance(o))
		if equality.Semantic.DeepEqual(base.Status, o.Status) {
			continue
		}
		if err := r.Status().Patch(ctx, o, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return fmt.Errorf("write status of output %s: %w", o.Name, err)
		}
	}
	for i := range inputs {
		base := &inputs[i]
		in := base.DeepCopy()
		update(inputAcceptance(in))
		if equality.Semantic.DeepEqual(base.Status, in.Status) {
			continue
		}
		if err := r.Status().Patch(ctx, in, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return fmt.Errorf("write status of input %s: %w", in.Name, err)
		}
	}
	return nil
}

// judge sets one Output's or Input's rejectedBy entry for the Cluster and its Accepted condition. The
// Cluster's own entry is there while its collectors refuse a configuration blamed on the object, kept as it
// is while the Cluster's verdict is not known, and dropped otherwise (also when the Cluster does not send
// the object). Entries of Clusters that no longer exist are dropped (exists nil keeps every other entry).
// Accepted is False while any entry is there; True once none is, when the Cluster sends the object or the
// condition was set before.
func judge(a acceptance, cluster string, sent bool, exists map[string]bool, v sharedVerdict) {
	var kept []operatorv1alpha1.ConfigurationRejection
	for _, e := range *a.rejectedBy {
		switch {
		case e.Cluster == cluster:
			if sent && !v.known {
				kept = append(kept, e)
			}
		case exists == nil || exists[e.Cluster]:
			kept = append(kept, e)
		}
	}
	if sent && v.known && v.refused && v.blames(a.kind, a.name) {
		kept = append(kept, operatorv1alpha1.ConfigurationRejection{Cluster: cluster,
			Message: truncate(fmt.Sprintf("the collectors refuse the configuration with %s %s (%s): %s", a.kind, a.name, v.basis,
				v.message), maxRejectionMessage)})
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].Cluster < kept[j].Cluster })
	*a.rejectedBy = kept

	cond := metav1.Condition{Type: operatorv1alpha1.ConditionAccepted, Status: metav1.ConditionTrue,
		Reason:             operatorv1alpha1.ReasonAcceptedByCollectors,
		Message:            fmt.Sprintf("no Cluster's collectors refuse a configuration with this %s", a.kind),
		ObservedGeneration: a.generation}
	if len(kept) > 0 {
		var parts []string
		for _, e := range kept {
			parts = append(parts, fmt.Sprintf("Cluster %s: %s", e.Cluster, e.Message))
		}
		cond.Status, cond.Reason = metav1.ConditionFalse, operatorv1alpha1.ReasonRejectedByCollectors
		cond.Message = truncate(strings.Join(parts, "; "), maxConditionMessage)
	} else if !(sent && v.known) && meta.FindStatusCondition(*a.conditions, operatorv1alpha1.ConditionAccepted) == nil {
		return // nothing is known of it yet
	}
	meta.SetStatusCondition(a.conditions, cond)
	*a.observedGeneration = a.generation
}

// truncate shortens s to at most n bytes, on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const ellipsis = "…"
	cut := n - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}
