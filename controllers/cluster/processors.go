package cluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/render"
	"github.com/gnmic-operator/gnmic-operator/internal/selection"
)

// setProcessorsResolved sets the ProcessorsResolved condition of an Output or Input with spec.eventProcessors
// that the Cluster selects: False while one of them (or one an event-combine among them runs) does not exist,
// and the object is then sent to no collector; True otherwise. It judges the object's own list only, which is
// the same for every Cluster that selects it: a Pipeline's processorRefs to a missing Processor is that
// Pipeline's problem (its Ready condition), and the Cluster's TargetsSkipped event names the Outputs and Inputs
// it leaves out for it.
func setProcessorsResolved(a acceptance, w *world) {
	if len(a.eventProcessors) == 0 {
		meta.RemoveStatusCondition(a.conditions, operatorv1alpha1.ConditionProcessorsResolved)
		return
	}
	if !w.selects(selection.Kind(a.kind), a.name) {
		return
	}
	cond := metav1.Condition{Type: operatorv1alpha1.ConditionProcessorsResolved, Status: metav1.ConditionTrue,
		Reason:             operatorv1alpha1.ReasonProcessorsResolved,
		Message:            fmt.Sprintf("every processor of spec.eventProcessors exists (%d)", len(a.eventProcessors)),
		ObservedGeneration: a.generation}
	if _, err := render.ProcessorsOf(a.eventProcessors, w.namespaceProcessors()); err != nil {
		cond.Status, cond.Reason = metav1.ConditionFalse, operatorv1alpha1.ReasonProcessorNotFound
		if errors.Is(err, render.ErrInvalidProcessor) {
			cond.Reason = operatorv1alpha1.ReasonInvalidProcessor
		}
		cond.Message = truncate("sent to no collector: spec.eventProcessors: "+err.Error(), maxConditionMessage)
	}
	meta.SetStatusCondition(a.conditions, cond)
	*a.observedGeneration = a.generation
}

// namespaceProcessors are the Processors of the Cluster's namespace by name.
func (w *world) namespaceProcessors() map[string]*operatorv1alpha1.Processor {
	byName := make(map[string]*operatorv1alpha1.Processor, len(w.objects.Processors))
	for i := range w.objects.Processors {
		byName[w.objects.Processors[i].Name] = &w.objects.Processors[i]
	}
	return byName
}

// processorUses are, per Processor, the Outputs and Inputs the Cluster sends that apply it (through their
// chain, or an event-combine in it), each list sorted.
func processorUses(w *world) map[string]operatorv1alpha1.ProcessorUse {
	uses := map[string]operatorv1alpha1.ProcessorUse{}
	add := func(chain []string, object string, isInput bool) {
		used, err := render.ProcessorsOf(chain, w.selection.Processors)
		if err != nil {
			return // the object is not sent
		}
		for _, p := range used {
			u := uses[p]
			if isInput {
				u.Inputs = append(u.Inputs, object)
			} else {
				u.Outputs = append(u.Outputs, object)
			}
			uses[p] = u
		}
	}
	for _, name := range slices.Sorted(maps.Keys(w.rendered.Outputs)) {
		add(w.selection.OutputProcessors[name], name, false)
	}
	for _, name := range slices.Sorted(maps.Keys(w.rendered.Inputs)) {
		add(w.selection.Inputs[name].Processors, name, true)
	}
	return uses
}

// reportProcessors keeps this Cluster's entry in the usedBy list of every Processor of the namespace (present
// while an Output or Input the Cluster sends applies it), drops the entries of Clusters that no longer exist,
// and sets each Processor's InUse condition from the list. An unchanged fleet costs no write.
func (r *Reconciler) reportProcessors(ctx context.Context, cluster *operatorv1alpha1.Cluster, w *world) error {
	if w.renderErr != nil || len(w.objects.Processors) == 0 {
		return nil // which objects the Cluster sends is not known, or there is nothing to report on
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
	uses := processorUses(w)
	health := r.memoryOf(client.ObjectKeyFromObject(cluster)).outputHealth
	return r.writeProcessorUses(ctx, w.objects.Processors, func(p *operatorv1alpha1.Processor) {
		use, used := uses[p.Name]
		use.Cluster = cluster.Name
		recordUse(p, cluster.Name, use, used, exists)
		if health.watched {
			judgeRunning(processorRunning(p), cluster.Name, used, exists, health.blaming(p.Name))
		}
		if err := render.CheckProcessor(p); err != nil {
			meta.SetStatusCondition(&p.Status.Conditions, metav1.Condition{Type: operatorv1alpha1.ConditionInUse,
				Status: metav1.ConditionFalse, Reason: operatorv1alpha1.ReasonInvalidProcessor,
				Message:            truncate("sent to no collector, with the Outputs and Inputs that apply it: "+err.Error(), maxConditionMessage),
				ObservedGeneration: p.Generation})
		}
	})
}

// processorRunning is the part of a Processor's status judgeRunning keeps: its failedOn list and Running
// condition.
func processorRunning(p *operatorv1alpha1.Processor) acceptance {
	return acceptance{kind: kindProcessor, name: p.Name, generation: p.Generation,
		observedGeneration: &p.Status.ObservedGeneration, conditions: &p.Status.Conditions, failedOn: &p.Status.FailedOn}
}

// removeFromProcessors removes a deleted Cluster's entries from the usedBy and failedOn lists of its namespace's Processors.
func (r *Reconciler) removeFromProcessors(ctx context.Context, deleted types.NamespacedName) error {
	var processors operatorv1alpha1.ProcessorList
	// writeProcessorUses copies what it changes.
	if err := r.List(ctx, &processors, client.InNamespace(deleted.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return fmt.Errorf("list processors: %w", err)
	}
	return r.writeProcessorUses(ctx, processors.Items, func(p *operatorv1alpha1.Processor) {
		recordUse(p, deleted.Name, operatorv1alpha1.ProcessorUse{}, false, nil)
		judgeRunning(processorRunning(p), deleted.Name, false, nil, outputHealth{})
	})
}

// writeProcessorUses applies update to a copy of every Processor and writes those whose status changed. The
// Processors given may be the cache's own: they are only read.
func (r *Reconciler) writeProcessorUses(ctx context.Context, processors []operatorv1alpha1.Processor,
	update func(*operatorv1alpha1.Processor)) error {
	for i := range processors {
		base := &processors[i]
		p := base.DeepCopy()
		update(p)
		if equality.Semantic.DeepEqual(base.Status, p.Status) {
			continue
		}
		if err := r.Status().Patch(ctx, p, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return fmt.Errorf("write status of processor %s: %w", p.Name, err)
		}
	}
	return nil
}

// recordUse sets the Cluster's entry of p's usedBy (use, when used; none otherwise), drops the entries of
// Clusters that no longer exist (exists nil keeps every other entry) and sets InUse from the list. A Processor
// no Cluster ever used gets its condition once a Cluster judged it.
func recordUse(p *operatorv1alpha1.Processor, cluster string, use operatorv1alpha1.ProcessorUse, used bool, exists map[string]bool) {
	var kept []operatorv1alpha1.ProcessorUse
	for _, e := range p.Status.UsedBy {
		if e.Cluster != cluster && (exists == nil || exists[e.Cluster]) {
			kept = append(kept, e)
		}
	}
	if used {
		kept = append(kept, use)
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].Cluster < kept[j].Cluster })
	p.Status.UsedBy = kept

	cond := metav1.Condition{Type: operatorv1alpha1.ConditionInUse, Status: metav1.ConditionFalse,
		Reason: operatorv1alpha1.ReasonNotUsed, Message: "no Output or Input a Cluster sends applies this processor",
		ObservedGeneration: p.Generation}
	if len(kept) > 0 {
		var parts []string
		for _, e := range kept {
			parts = append(parts, fmt.Sprintf("Cluster %s: %s", e.Cluster, describeUse(e)))
		}
		cond.Status, cond.Reason = metav1.ConditionTrue, operatorv1alpha1.ReasonUsed
		cond.Message = truncate(strings.Join(parts, "; "), maxConditionMessage)
	}
	meta.SetStatusCondition(&p.Status.Conditions, cond)
	p.Status.ObservedGeneration = p.Generation
}

func describeUse(u operatorv1alpha1.ProcessorUse) string {
	var parts []string
	if len(u.Outputs) > 0 {
		parts = append(parts, "outputs "+strings.Join(u.Outputs, ", "))
	}
	if len(u.Inputs) > 0 {
		parts = append(parts, "inputs "+strings.Join(u.Inputs, ", "))
	}
	return strings.Join(parts, " and ")
}
