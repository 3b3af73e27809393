package cluster

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/render"
	"github.com/gnmic-operator/gnmic-operator/internal/selection"
)

// Each watch maps a change to the Clusters it affects, and only those (setup.go has the table of watches).

// clusterMappings map watched objects to the Clusters they affect, reading nothing but the cache. They change
// nothing they list, so they list the cache's own objects, without deep copies (client.UnsafeDisableDeepCopy,
// docs/development.md "Reading from the cache"): a Target event in a namespace of 50,000 Targets would
// otherwise copy them all.
type clusterMappings struct{ client.Reader }

func requests(namespace string, clusters ...string) []reconcile.Request {
	seen := map[string]bool{}
	var out []reconcile.Request
	for _, c := range clusters {
		if c == "" || seen[c] {
			continue
		}
		seen[c] = true
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: namespace, Name: c}})
	}
	return out
}

func clusterOfPod(_ context.Context, obj client.Object) []reconcile.Request {
	return requests(obj.GetNamespace(), obj.GetLabels()[operatorv1alpha1.ClusterLabel])
}

func clusterOfPipeline(_ context.Context, obj client.Object) []reconcile.Request {
	p, ok := obj.(*operatorv1alpha1.Pipeline)
	if !ok {
		return nil
	}
	return requests(p.Namespace, p.Spec.ClusterRef)
}

func (m clusterMappings) pipelines(ctx context.Context, namespace string) []operatorv1alpha1.Pipeline {
	var list operatorv1alpha1.PipelineList
	if err := m.List(ctx, &list, client.InNamespace(namespace), client.UnsafeDisableDeepCopy); err != nil {
		log.FromContext(ctx).Error(err, "list pipelines for a watch event", "namespace", namespace)
		return nil
	}
	return list.Items
}

// clustersOfTarget wakes the Clusters that select the Target and those that still list it in its status
// (so that a Cluster that stops selecting it removes its entry).
func (m clusterMappings) clustersOfTarget(ctx context.Context, obj client.Object) []reconcile.Request {
	t, ok := obj.(*operatorv1alpha1.Target)
	if !ok {
		return nil
	}
	clusters := selection.ClustersSelecting(selection.KindTarget, t.Name, t.Labels, m.pipelines(ctx, t.Namespace))
	for c := range t.Status.ClusterStates {
		clusters = append(clusters, c)
	}
	return requests(t.Namespace, clusters...)
}

func (m clusterMappings) clustersSelecting(kind selection.Kind) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		return requests(obj.GetNamespace(),
			selection.ClustersSelecting(kind, obj.GetName(), obj.GetLabels(), m.pipelines(ctx, obj.GetNamespace()))...)
	}
}

// clustersOfProcessor wakes the Clusters whose Pipelines pick the Processor, those that select an Output or
// Input naming it in spec.eventProcessors, and those that list it in its status (so that a Cluster that stops
// using it removes its entry).
func (m clusterMappings) clustersOfProcessor(ctx context.Context, obj client.Object) []reconcile.Request {
	p, ok := obj.(*operatorv1alpha1.Processor)
	if !ok {
		return nil
	}
	var outputs operatorv1alpha1.OutputList
	var inputs operatorv1alpha1.InputList
	for _, l := range []client.ObjectList{&outputs, &inputs} {
		if err := m.List(ctx, l, client.InNamespace(p.Namespace), client.UnsafeDisableDeepCopy); err != nil {
			log.FromContext(ctx).Error(err, "list outputs and inputs for a processor event", "namespace", p.Namespace)
			return nil
		}
	}
	clusters := selection.ClustersUsingProcessor(p.Name, p.Labels, outputs.Items, inputs.Items, m.pipelines(ctx, p.Namespace))
	for _, u := range p.Status.UsedBy {
		clusters = append(clusters, u.Cluster)
	}
	return requests(p.Namespace, clusters...)
}

func (m clusterMappings) clustersOfProfile(ctx context.Context, obj client.Object) []reconcile.Request {
	return requests(obj.GetNamespace(), m.clustersUsingProfiles(ctx, obj.GetNamespace(), obj.GetName())...)
}

// clustersOfSecret wakes the Clusters whose targets use the Secret through their profile, those that select
// an Output or Input taking a value from it, and the Cluster that owns it (its certificates, fingerprint key
// and target TLS copy carry the Cluster's label): a deleted or edited one is written again at once.
func (m clusterMappings) clustersOfSecret(ctx context.Context, obj client.Object) []reconcile.Request {
	ns := obj.GetNamespace()
	clusters := []string{obj.GetLabels()[operatorv1alpha1.ClusterLabel]}
	var profiles operatorv1alpha1.TargetProfileList
	if err := m.List(ctx, &profiles, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
		log.FromContext(ctx).Error(err, "list target profiles for a secret event", "namespace", ns)
		return requests(ns, clusters...)
	}
	if using := selection.ProfilesUsingSecret(obj.GetName(), profiles.Items); len(using) > 0 {
		clusters = append(clusters, m.clustersUsingProfiles(ctx, ns, using...)...)
	}
	clusters = append(clusters, m.clustersWithConfigFromSecret(ctx, ns, obj.GetName())...)
	return requests(ns, clusters...)
}

// clustersWithConfigFromSecret are the Clusters that select an Output or Input whose spec.secretRefs name the
// Secret.
func (m clusterMappings) clustersWithConfigFromSecret(ctx context.Context, namespace, secret string) []string {
	var outputs operatorv1alpha1.OutputList
	var inputs operatorv1alpha1.InputList
	for _, l := range []client.ObjectList{&outputs, &inputs} {
		if err := m.List(ctx, l, client.InNamespace(namespace), client.UnsafeDisableDeepCopy); err != nil {
			log.FromContext(ctx).Error(err, "list outputs and inputs for a secret event", "namespace", namespace)
			return nil
		}
	}
	var pipelines []operatorv1alpha1.Pipeline
	var clusters []string
	selecting := func(kind selection.Kind, name string, labels map[string]string) {
		if pipelines == nil {
			pipelines = m.pipelines(ctx, namespace)
		}
		clusters = append(clusters, selection.ClustersSelecting(kind, name, labels, pipelines)...)
	}
	for _, o := range outputs.Items {
		if render.UsesSecret(o.Spec.SecretRefs, secret) {
			selecting(selection.KindOutput, o.Name, o.Labels)
		}
	}
	for _, in := range inputs.Items {
		if render.UsesSecret(in.Spec.SecretRefs, secret) {
			selecting(selection.KindInput, in.Name, in.Labels)
		}
	}
	return clusters
}

func (m clusterMappings) clustersUsingProfiles(ctx context.Context, namespace string, profiles ...string) []string {
	var targets operatorv1alpha1.TargetList
	if err := m.List(ctx, &targets, client.InNamespace(namespace), client.UnsafeDisableDeepCopy); err != nil {
		log.FromContext(ctx).Error(err, "list targets for a profile event", "namespace", namespace)
		return nil
	}
	pipelines := m.pipelines(ctx, namespace)
	var clusters []string
	for _, p := range profiles {
		clusters = append(clusters, selection.ClustersUsingProfile(p, targets.Items, pipelines)...)
	}
	return clusters
}
