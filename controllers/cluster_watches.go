package controllers

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/collector"
	"github.com/gnmic-operator/gnmic-operator/controllers/credentials"
	"github.com/gnmic-operator/gnmic-operator/internal/render"
	"github.com/gnmic-operator/gnmic-operator/internal/selection"
)

// SetupWithManager registers the reconciler and its watches. Every watch maps a change to the Clusters it
// affects, and only those: a Target's change wakes the Clusters whose Pipelines select it, a Secret's the
// Clusters whose targets use a profile that references it, that select an Output or Input taking a value
// from it, or that own it. Status-only changes (mostly the operator's own writes) wake nothing.
func (r *ClusterReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.OperatorNamespace == "" {
		r.OperatorNamespace = runningNamespace()
	}
	r.wakes = newWakes()
	r.streams = collector.NewStreams(r.wakes.soon)
	// Secrets that targets use are read through a content cache checked against the metadata watch below.
	r.credentials = &credentials.Keeper{Client: r.Client, Reader: credentials.NewSecretReader(r.APIReader, mgr.GetCache()),
		Scheme: r.Scheme, Recorder: r.Recorder, Now: r.Now}
	if err := mgr.Add(r.streams); err != nil {
		return fmt.Errorf("add collector event streams: %w", err)
	}
	specOrLabels := builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))
	options := controller.Options{MaxConcurrentReconciles: max(r.MaxConcurrentReconciles, 1)}
	shardWakes := make(<-chan event.GenericEvent)
	b := ctrl.NewControllerManagedBy(mgr).
		For(&operatorv1alpha1.Cluster{}, builder.WithPredicates(predicate.GenerationChangedPredicate{}))
	if r.Sharding != nil {
		// Sharded, every replica reconciles its share: none waits for leader election, and each caches and
		// watches only its share's objects (shard_cache.go).
		options.NeedLeaderElection = ptr.To(false)
		shardWakes = r.Sharding.Wakes()
		if err := r.Sharding.cacheShare(mgr, r); err != nil {
			return err
		}
		r.Sharding.ready = informersSynced(mgr.GetCache(), managerCacheKinds()...)
		r.Sharding.takeOver = r.takeOver
		// Status changes reconcile nothing (the Cluster watch wants a new generation), but a drain must start
		// a round: the round takes the drained Cluster over.
		clusters, err := mgr.GetCache().GetInformer(context.Background(), &operatorv1alpha1.Cluster{})
		if err != nil {
			return fmt.Errorf("watch Clusters for handovers: %w", err)
		}
		if _, err := clusters.AddEventHandler(toolscache.ResourceEventHandlerFuncs{UpdateFunc: r.Sharding.noticeHandover}); err != nil {
			return fmt.Errorf("watch Clusters for handovers: %w", err)
		}
		if err := mgr.Add(r.Sharding); err != nil {
			return fmt.Errorf("add operator sharding: %w", err)
		}
		b = b.WatchesRawSource(shareSource{share: r.Sharding.share,
			watches: r.shareWatches(mgr, predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))})
	} else {
		b = b.Owns(&appsv1.StatefulSet{}).
			Owns(&corev1.Service{}).
			Owns(&corev1.ConfigMap{}).
			Owns(&policyv1.PodDisruptionBudget{}).
			Owns(&networkingv1.NetworkPolicy{}).
			Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(clusterOfPod)).
			Watches(&operatorv1alpha1.Target{}, r.wakes.bursts(r.clustersOfTarget), specOrLabels)
	}
	return b.
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.clustersOfNode), builder.WithPredicates(nodeAvailabilityChanged())).
		Watches(&operatorv1alpha1.Pipeline{}, handler.EnqueueRequestsFromMapFunc(clusterOfPipeline), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&operatorv1alpha1.Subscription{}, handler.EnqueueRequestsFromMapFunc(r.clustersSelecting(selection.KindSubscription)), specOrLabels).
		Watches(&operatorv1alpha1.Output{}, handler.EnqueueRequestsFromMapFunc(r.clustersSelecting(selection.KindOutput)), specOrLabels).
		Watches(&operatorv1alpha1.Input{}, handler.EnqueueRequestsFromMapFunc(r.clustersSelecting(selection.KindInput)), specOrLabels).
		Watches(&operatorv1alpha1.TargetProfile{}, handler.EnqueueRequestsFromMapFunc(r.clustersOfProfile), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WatchesMetadata(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.clustersOfSecret)).
		WatchesRawSource(r.wakes).
		WatchesRawSource(source.Channel(shardWakes, &handler.EnqueueRequestForObject{})).
		WithOptions(options).
		Named("cluster").
		Complete(r)
}

// managerCacheKinds are the kinds a sharded Cluster controller watches through the manager's cache; the
// objects of its share come from the share's caches (shard_cache.go).
func managerCacheKinds() []client.Object {
	secrets := &metav1.PartialObjectMetadata{}
	secrets.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return []client.Object{&operatorv1alpha1.Cluster{}, &corev1.Node{}, &operatorv1alpha1.Pipeline{},
		&operatorv1alpha1.Subscription{}, &operatorv1alpha1.Output{}, &operatorv1alpha1.Input{},
		&operatorv1alpha1.TargetProfile{}, secrets}
}

// informersSynced returns a wait for the informers of kinds in c: each is started if it was not, and the wait
// returns once all have synced.
func informersSynced(c cache.Cache, kinds ...client.Object) func(context.Context) error {
	return func(ctx context.Context) error {
		for _, obj := range kinds {
			if _, err := c.GetInformer(ctx, obj, cache.BlockUntilSynced(true)); err != nil {
				return fmt.Errorf("sync the %T informer: %w", obj, err)
			}
		}
		return nil
	}
}

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

func (r *ClusterReconciler) pipelines(ctx context.Context, namespace string) []operatorv1alpha1.Pipeline {
	var list operatorv1alpha1.PipelineList
	if err := r.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		log.FromContext(ctx).Error(err, "list pipelines for a watch event", "namespace", namespace)
		return nil
	}
	return list.Items
}

// clustersOfTarget wakes the Clusters that select the Target and those that still list it in its status
// (so that a Cluster that stops selecting it removes its entry).
func (r *ClusterReconciler) clustersOfTarget(ctx context.Context, obj client.Object) []reconcile.Request {
	t, ok := obj.(*operatorv1alpha1.Target)
	if !ok {
		return nil
	}
	clusters := selection.ClustersSelecting(selection.KindTarget, t.Name, t.Labels, r.pipelines(ctx, t.Namespace))
	for c := range t.Status.ClusterStates {
		clusters = append(clusters, c)
	}
	return requests(t.Namespace, clusters...)
}

func (r *ClusterReconciler) clustersSelecting(kind selection.Kind) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		return requests(obj.GetNamespace(),
			selection.ClustersSelecting(kind, obj.GetName(), obj.GetLabels(), r.pipelines(ctx, obj.GetNamespace()))...)
	}
}

func (r *ClusterReconciler) clustersOfProfile(ctx context.Context, obj client.Object) []reconcile.Request {
	return requests(obj.GetNamespace(), r.clustersUsingProfiles(ctx, obj.GetNamespace(), obj.GetName())...)
}

// clustersOfSecret wakes the Clusters whose targets use the Secret through their profile, those that select
// an Output or Input taking a value from it, and the Cluster that owns it (its certificates, fingerprint key
// and target TLS copy carry the Cluster's label): a deleted or edited one is written again at once.
func (r *ClusterReconciler) clustersOfSecret(ctx context.Context, obj client.Object) []reconcile.Request {
	ns := obj.GetNamespace()
	clusters := []string{obj.GetLabels()[operatorv1alpha1.ClusterLabel]}
	var profiles operatorv1alpha1.TargetProfileList
	if err := r.List(ctx, &profiles, client.InNamespace(ns)); err != nil {
		log.FromContext(ctx).Error(err, "list target profiles for a secret event", "namespace", ns)
		return requests(ns, clusters...)
	}
	if using := selection.ProfilesUsingSecret(obj.GetName(), profiles.Items); len(using) > 0 {
		clusters = append(clusters, r.clustersUsingProfiles(ctx, ns, using...)...)
	}
	clusters = append(clusters, r.clustersWithConfigFromSecret(ctx, ns, obj.GetName())...)
	return requests(ns, clusters...)
}

// clustersWithConfigFromSecret are the Clusters that select an Output or Input whose spec.secretRefs name the
// Secret.
func (r *ClusterReconciler) clustersWithConfigFromSecret(ctx context.Context, namespace, secret string) []string {
	var outputs operatorv1alpha1.OutputList
	var inputs operatorv1alpha1.InputList
	for _, l := range []client.ObjectList{&outputs, &inputs} {
		if err := r.List(ctx, l, client.InNamespace(namespace)); err != nil {
			log.FromContext(ctx).Error(err, "list outputs and inputs for a secret event", "namespace", namespace)
			return nil
		}
	}
	var pipelines []operatorv1alpha1.Pipeline
	var clusters []string
	selecting := func(kind selection.Kind, name string, labels map[string]string) {
		if pipelines == nil {
			pipelines = r.pipelines(ctx, namespace)
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

func (r *ClusterReconciler) clustersUsingProfiles(ctx context.Context, namespace string, profiles ...string) []string {
	var targets operatorv1alpha1.TargetList
	if err := r.List(ctx, &targets, client.InNamespace(namespace)); err != nil {
		log.FromContext(ctx).Error(err, "list targets for a profile event", "namespace", namespace)
		return nil
	}
	pipelines := r.pipelines(ctx, namespace)
	var clusters []string
	for _, p := range profiles {
		clusters = append(clusters, selection.ClustersUsingProfile(p, targets.Items, pipelines)...)
	}
	return clusters
}

// nodeAvailabilityChanged passes Node events that can change whether its pods can serve: creation, deletion,
// a change of its Ready condition or of its taints. Nodes' frequent heartbeats pass nothing.
func nodeAvailabilityChanged() predicate.Funcs {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			before, ok1 := e.ObjectOld.(*corev1.Node)
			after, ok2 := e.ObjectNew.(*corev1.Node)
			if !ok1 || !ok2 {
				return true
			}
			return nodeReady(before) != nodeReady(after) || !equality.Semantic.DeepEqual(before.Spec.Taints, after.Spec.Taints)
		},
	}
}

func nodeReady(n *corev1.Node) corev1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return corev1.ConditionUnknown
}
