package tunnelpolicy

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/conflict"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/internal/tunnelpolicy"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

// +kubebuilder:rbac:groups=operator.gnmic.dev,resources=tunneltargetpolicies,verbs=list;watch
// +kubebuilder:rbac:groups=operator.gnmic.dev,resources=tunneltargetpolicies/status,verbs=patch

// Reconciler writes the status of TunnelTargetPolicies.
type Reconciler struct {
	client.Client
}

// Reconcile reads the policy and what it refers to, computes its status and writes it once.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var policy operatorv1alpha1.TunnelTargetPolicy
	if err := r.Get(ctx, req.NamespacedName, &policy); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("get tunnel target policy: %w", err)
	}
	ns := client.InNamespace(policy.Namespace)
	var (
		profiles operatorv1alpha1.TargetProfileList
		subs     operatorv1alpha1.SubscriptionList
		clusters operatorv1alpha1.ClusterList
		// Secrets through their metadata only: the operator caches no Secret's data.
		secrets metav1.PartialObjectMetadataList
	)
	secrets.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	for _, l := range []struct {
		what string
		list client.ObjectList
	}{{"target profiles", &profiles}, {"subscriptions", &subs}, {"clusters", &clusters}, {"secrets", &secrets}} {
		// Read only (the policy is the copy written): the cache's own objects, without copies.
		if err := r.List(ctx, l.list, ns, client.UnsafeDisableDeepCopy); err != nil {
			return ctrl.Result{}, fmt.Errorf("list %s: %w", l.what, err)
		}
	}
	base := policy.DeepCopy()
	var profile *operatorv1alpha1.TargetProfile
	for i := range profiles.Items {
		if profiles.Items[i].Name == policy.Spec.Profile {
			profile = &profiles.Items[i]
		}
	}
	computeStatus(&policy, names(profiles.Items), names(subs.Items), clusters.Items)
	if problem := tunnelpolicy.CheckSecrets(profile, names(secrets.Items)); problem != nil &&
		meta.IsStatusConditionTrue(policy.Status.Conditions, operatorv1alpha1.ConditionReady) {
		// The Cluster reconciler leaves such a policy out when it renders it (render.TunnelTargetMatches).
		meta.SetStatusCondition(&policy.Status.Conditions, metav1.Condition{Type: operatorv1alpha1.ConditionReady,
			Status: metav1.ConditionFalse, Reason: problem.Reason, Message: problem.Message, ObservedGeneration: policy.Generation})
	}
	if equality.Semantic.DeepEqual(base.Status, policy.Status) {
		return ctrl.Result{}, nil
	}
	if err := r.Status().Patch(ctx, &policy, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return conflict.Retry(ctx, fmt.Errorf("write tunnel target policy status: %w", err))
	}
	return ctrl.Result{}, nil
}

// computeStatus sets the policy's status: the Clusters it applies to, the devices their collectors run that it
// matched, and its Ready condition.
func computeStatus(p *operatorv1alpha1.TunnelTargetPolicy, profiles, subs map[string]bool, clusters []operatorv1alpha1.Cluster) {
	st := &p.Status
	st.ObservedGeneration = p.Generation
	st.Clusters, st.TunnelTargets = nil, 0
	var withoutTunnel []string
	for i := range clusters {
		c := &clusters[i]
		if !tunnelpolicy.Selects(p, c.Name, c.Labels) {
			continue
		}
		if !workload.TunnelEnabled(c) {
			withoutTunnel = append(withoutTunnel, c.Name)
			continue
		}
		st.Clusters = append(st.Clusters, c.Name)
		for _, col := range c.Status.Collectors {
			for _, tt := range col.TunnelTargets {
				if tt.Policy == p.Name {
					st.TunnelTargets++
				}
			}
		}
	}
	slices.Sort(st.Clusters)
	ready := metav1.Condition{Type: operatorv1alpha1.ConditionReady, Status: metav1.ConditionTrue,
		Reason: operatorv1alpha1.ReasonRendered, ObservedGeneration: p.Generation,
		Message: fmt.Sprintf("rendered as a tunnel-target-match for Cluster(s) %s", strings.Join(st.Clusters, ", "))}
	switch problem := tunnelpolicy.Check(p, profiles, subs); {
	case problem != nil:
		ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, problem.Reason, problem.Message
		st.Clusters = nil
	case len(st.Clusters) == 0:
		ready.Status, ready.Reason = metav1.ConditionFalse, operatorv1alpha1.ReasonNoClusters
		ready.Message = "no Cluster of the namespace is selected and runs a tunnel server (spec.grpcTunnel)"
		if len(withoutTunnel) > 0 {
			ready.Message = fmt.Sprintf("the selected Cluster(s) %s run no tunnel server: set spec.grpcTunnel",
				strings.Join(withoutTunnel, ", "))
		}
	}
	meta.SetStatusCondition(&st.Conditions, ready)
	setRunning(p, clusters)
}

// setRunning says whether the collectors of the Clusters the policy applies to match devices against it: gNMIc
// before 0.47.0 takes tunnel-target-matches and matches no device with them (docs/collectors.md). Their
// Clusters' status.collectors say which pods lack it, as the pods answered. No Cluster, no condition.
func setRunning(p *operatorv1alpha1.TunnelTargetPolicy, clusters []operatorv1alpha1.Cluster) {
	st := &p.Status
	if len(st.Clusters) == 0 {
		meta.RemoveStatusCondition(&st.Conditions, operatorv1alpha1.ConditionRunning)
		return
	}
	feature := string(gnmic.FeatureTunnelTargetMatches)
	var parts []string
	for i := range clusters {
		c := &clusters[i]
		if !slices.Contains(st.Clusters, c.Name) {
			continue
		}
		var pods []string
		answers := ""
		for _, col := range c.Status.Collectors {
			if slices.Contains(col.MissingFeatures, feature) {
				pods, answers = append(pods, col.Pod), col.AnswersAs
			}
		}
		if len(pods) > 0 {
			parts = append(parts, fmt.Sprintf("Cluster %s, pod(s) %s (gNMIc %s)", c.Name, strings.Join(pods, ", "), answers))
		}
	}
	running := metav1.Condition{Type: operatorv1alpha1.ConditionRunning, Status: metav1.ConditionTrue,
		Reason: operatorv1alpha1.ReasonRunningOnCollectors, ObservedGeneration: p.Generation,
		Message: fmt.Sprintf("no collector of Cluster(s) %s is known to lack working %s", strings.Join(st.Clusters, ", "), feature)}
	if len(parts) > 0 {
		running.Status, running.Reason = metav1.ConditionFalse, operatorv1alpha1.ReasonCollectorTooOld
		running.Message = fmt.Sprintf("%s: their collectors ignore every device that dials in (%s match devices from "+
			"gNMIc %s)", strings.Join(parts, "; "), feature, gnmic.FeatureSince(gnmic.FeatureTunnelTargetMatches))
	}
	meta.SetStatusCondition(&st.Conditions, running)
}

func names[T any, PT interface {
	*T
	client.Object
}](items []T) map[string]bool {
	out := make(map[string]bool, len(items))
	for i := range items {
		out[PT(&items[i]).GetName()] = true
	}
	return out
}

// SetupWithManager registers the reconciler: a policy wakes when it changes, when a Cluster, TargetProfile
// or Subscription of its namespace changes, and when a Secret of its namespace comes or goes (any of them may change its status). Clusters wake it on status
// changes too: the devices they report are its count.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	specOrLabels := builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))
	return ctrl.NewControllerManagedBy(mgr).
		For(&operatorv1alpha1.TunnelTargetPolicy{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&operatorv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.policiesOfNamespace)).
		Watches(&operatorv1alpha1.TargetProfile{}, handler.EnqueueRequestsFromMapFunc(r.policiesOfNamespace), specOrLabels).
		Watches(&operatorv1alpha1.Subscription{}, handler.EnqueueRequestsFromMapFunc(r.policiesOfNamespace), specOrLabels).
		WatchesMetadata(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.policiesOfNamespace),
			builder.WithPredicates(predicate.Funcs{UpdateFunc: func(event.UpdateEvent) bool { return false }})).
		Named("tunneltargetpolicy").
		Complete(r)
}

// policiesOfNamespace are every TunnelTargetPolicy of the object's namespace.
func (r *Reconciler) policiesOfNamespace(ctx context.Context, obj client.Object) []reconcile.Request {
	var policies operatorv1alpha1.TunnelTargetPolicyList
	if err := r.List(ctx, &policies, client.InNamespace(obj.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil {
		log.FromContext(ctx).Error(err, "list tunnel target policies", "namespace", obj.GetNamespace())
		return nil
	}
	out := make([]reconcile.Request, 0, len(policies.Items))
	for i := range policies.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&policies.Items[i])})
	}
	return out
}
