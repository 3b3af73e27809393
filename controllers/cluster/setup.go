package cluster

import (
	"cmp"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/discovery"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/collector"
	"github.com/gnmic-operator/gnmic-operator/controllers/credentials"
	"github.com/gnmic-operator/gnmic-operator/controllers/owned"
	"github.com/gnmic-operator/gnmic-operator/controllers/sharding"
	selectionkind "github.com/gnmic-operator/gnmic-operator/internal/selection"
)

// ownedKinds are the kinds a Cluster owns, each labelled operator.gnmic.dev/cluster with its name. They are the
// one table of them: the manager caches only such objects of these kinds (CacheByObject), a sharded replica
// caches them for the Clusters of its share (ShareKinds), and the Cluster controller watches them (watches).
// Pods are the StatefulSets' and name their Cluster by label only; every other kind is controlled by its
// Cluster.
var ownedKinds = []struct {
	object     client.Object
	controlled bool
}{
	{&appsv1.StatefulSet{}, true},
	{&corev1.Service{}, true},
	{&corev1.ConfigMap{}, true},
	{&policyv1.PodDisruptionBudget{}, true},
	{&networkingv1.NetworkPolicy{}, true},
	{&corev1.Pod{}, false},
}

// CacheOptions are the manager's cache options for the Cluster controller: CacheByObject, and no managedFields on
// any cached object. Nothing the operator does reads managedFields, and they are a large part of a Target (the
// caches of a sharded replica's share drop them too).
func CacheOptions() cache.Options {
	return cache.Options{ByObject: CacheByObject(), DefaultTransform: cache.TransformStripManagedFields()}
}

// CacheByObject limits what the operator caches of the kinds a Cluster owns to the objects it made (they carry
// operator.gnmic.dev/cluster): a large cluster's Pods and ConfigMaps (or every NetworkPolicy) would otherwise
// fill its memory. Secrets are watched through their metadata only; their data is read from the API server
// when their resourceVersion changed (credentials.SecretReader).
func CacheByObject() map[client.Object]cache.ByObject {
	req, err := labels.NewRequirement(operatorv1alpha1.ClusterLabel, selection.Exists, nil)
	if err != nil {
		panic(err) // a constant, valid label key
	}
	owned := cache.ByObject{Label: labels.NewSelector().Add(*req)}
	byObject := map[client.Object]cache.ByObject{}
	for _, k := range ownedKinds {
		byObject[k.object] = owned
	}
	return byObject
}

// ShareKinds are what a sharded replica caches for the Clusters of its share: the kinds they own, and in each of
// their namespaces the Targets, which Pipelines select by label.
func ShareKinds() sharding.Kinds {
	kinds := sharding.Kinds{PerNamespace: []client.Object{&operatorv1alpha1.Target{}}}
	for _, k := range ownedKinds {
		kinds.Owned = append(kinds.Owned, k.object)
	}
	return kinds
}

// watch is one kind the Cluster controller watches besides Clusters, with how a change maps to the Clusters it
// affects.
type watch struct {
	object     client.Object
	handler    handler.EventHandler
	predicates []predicate.Predicate
	// share is true for the kinds a sharded replica reads from the caches of its share (ShareKinds); the
	// others it reads from the manager's cache.
	share bool
}

// watches are every watch of the Cluster controller. Every one maps a change to the Clusters it affects, and
// only those: a Target's change wakes the Clusters whose Pipelines select it, a Processor's the Clusters whose
// Pipelines pick it or that select an Output or Input naming it, a Secret's the Clusters whose
// targets use a profile that references it, that select an Output or Input taking a value from it, or that own
// it. Status-only changes (mostly the operator's own writes) wake nothing.
func (r *Reconciler) watches(mgr ctrl.Manager) []watch {
	owner := handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &operatorv1alpha1.Cluster{},
		handler.OnlyControllerOwner())
	m := clusterMappings{r.Client}
	generation := []predicate.Predicate{predicate.GenerationChangedPredicate{}}
	specOrLabels := []predicate.Predicate{predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{})}
	var out []watch
	for _, k := range ownedKinds {
		w := watch{object: k.object, handler: owner, share: true}
		if !k.controlled {
			w.handler = handler.EnqueueRequestsFromMapFunc(clusterOfPod)
		}
		out = append(out, w)
	}
	secrets := &metav1.PartialObjectMetadata{}
	secrets.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return append(out,
		// Every change of a Target is counted (targetChanges); only those of its spec or labels wake Clusters.
		watch{object: &operatorv1alpha1.Target{}, handler: r.targetChanges.counting(r.wakes.bursts(m.clustersOfTarget), specOrLabels), share: true},
		watch{object: &corev1.Node{}, handler: handler.EnqueueRequestsFromMapFunc(m.clustersOfNode),
			predicates: []predicate.Predicate{nodeAvailabilityChanged()}},
		watch{object: &operatorv1alpha1.Pipeline{}, handler: handler.EnqueueRequestsFromMapFunc(clusterOfPipeline), predicates: generation},
		watch{object: &operatorv1alpha1.Subscription{},
			handler: handler.EnqueueRequestsFromMapFunc(m.alsoTunnel(m.clustersSelecting(selectionkind.KindSubscription))), predicates: specOrLabels},
		watch{object: &operatorv1alpha1.Output{},
			handler: handler.EnqueueRequestsFromMapFunc(m.clustersSelecting(selectionkind.KindOutput)), predicates: specOrLabels},
		watch{object: &operatorv1alpha1.Input{},
			handler: handler.EnqueueRequestsFromMapFunc(m.clustersSelecting(selectionkind.KindInput)), predicates: specOrLabels},
		watch{object: &operatorv1alpha1.Processor{}, handler: handler.EnqueueRequestsFromMapFunc(m.clustersOfProcessor), predicates: specOrLabels},
		watch{object: &operatorv1alpha1.TargetProfile{}, handler: handler.EnqueueRequestsFromMapFunc(m.alsoTunnel(m.clustersOfProfile)), predicates: generation},
		// Secrets through their metadata only (CacheByObject).
		watch{object: secrets, handler: handler.EnqueueRequestsFromMapFunc(m.alsoTunnel(m.clustersOfSecret))},
		watch{object: &operatorv1alpha1.TunnelTargetPolicy{}, handler: handler.EnqueueRequestsFromMapFunc(m.clustersWithTunnel), predicates: specOrLabels},
	)
}

// SetupWithManager makes what the reconciler remembers between reconciles, registers its controller with the
// watches of its kinds and its wakes, and adds the collector event streams it follows to the manager. Under
// sharding every replica reconciles its share: none waits for leader election, and the objects of the share
// come from sharding's caches (Sharding.Serve).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.OperatorNamespace == "" {
		r.OperatorNamespace = runningNamespace()
	}
	// Zero settings take their defaults, once.
	r.PollInterval = cmp.Or(r.PollInterval, DefaultPollInterval)
	r.BatchSize = cmp.Or(r.BatchSize, DefaultBatchSize)
	r.DropTimeout = cmp.Or(r.DropTimeout, DefaultDropTimeout)
	r.RepairAfter = cmp.Or(r.RepairAfter, DefaultRepairAfter)
	r.CollectorSilence = cmp.Or(r.CollectorSilence, DefaultCollectorSilence)
	r.CRDRecheck = cmp.Or(r.CRDRecheck, DefaultCRDRecheck)
	if r.Discovery == nil {
		d, err := discovery.NewDiscoveryClientForConfig(mgr.GetConfig())
		if err != nil {
			return fmt.Errorf("make a discovery client: %w", err)
		}
		r.Discovery = d
	}
	r.serviceMonitorCRD = &serviceMonitorCRD{discovery: r.Discovery, recheck: r.CRDRecheck, now: r.now}
	r.wakes = newWakes()
	r.targetChanges = &targetChanges{}
	r.streams = collector.NewStreams(r.wakes.soon)
	r.ledger = &collector.Ledger{}
	// Secrets that targets use are read through a content cache checked against the metadata watch.
	r.credentials = &credentials.Keeper{Client: r.Client, Reader: credentials.NewSecretReader(r.APIReader, mgr.GetCache()),
		Scheme: r.Scheme, Recorder: r.Recorder, Now: r.Now}
	r.owned = owned.Writer{Client: r.Client, Live: r.APIReader, Scheme: r.Scheme, Settled: &owned.Settled{}}
	r.turns = soleReplica{}
	if r.Sharding != nil {
		r.turns = r.Sharding
	}
	if err := mgr.Add(r.streams); err != nil {
		return fmt.Errorf("add collector event streams: %w", err)
	}

	options := controller.Options{MaxConcurrentReconciles: max(r.MaxConcurrentReconciles, 1)}
	b := ctrl.NewControllerManagedBy(mgr).
		For(&operatorv1alpha1.Cluster{}, builder.WithPredicates(predicate.GenerationChangedPredicate{}))
	var shared []sharding.Watch
	synced := []client.Object{&operatorv1alpha1.Cluster{}}
	for _, w := range r.watches(mgr) {
		if w.share && r.Sharding != nil {
			shared = append(shared, sharding.Watch{Object: w.object, Handler: w.handler, Predicates: w.predicates})
			continue
		}
		synced = append(synced, w.object)
		b = b.Watches(w.object, w.handler, builder.WithPredicates(w.predicates...))
	}
	if r.Sharding != nil {
		options.NeedLeaderElection = ptr.To(false)
		b = b.WatchesRawSource(r.Sharding.Serve(sharding.Reconciler{Watches: shared, Synced: synced, Wake: r.wakes.now, LetGo: r.letGo}))
	}
	return b.WatchesRawSource(r.wakes).
		WithOptions(options).
		Named("cluster").
		Complete(r)
}
