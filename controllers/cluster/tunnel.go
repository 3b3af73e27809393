package cluster

import (
	"context"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/collector"
	"github.com/gnmic-operator/gnmic-operator/controllers/owned"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/internal/render"
	"github.com/gnmic-operator/gnmic-operator/internal/tunnelpolicy"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

// Dial-in devices (spec.grpcTunnel, docs/dial-in.md). The Cluster's TunnelTargetPolicies are rendered as
// tunnel-target-matches into every pod's configuration; the devices a collector then runs through its tunnel
// are read with its targets, kept apart from them (collector.Runtime.Tunnel), and reported per pod. They are
// not placed: a device stays on the pod its tunnel reached.

// tunnelPolicies are the TunnelTargetPolicies of the namespace that select the Cluster and pass
// tunnelpolicy.Check, sorted by name (the order in which the collector tries them); none without spec.grpcTunnel.
func tunnelPolicies(cluster *operatorv1alpha1.Cluster, all []operatorv1alpha1.TunnelTargetPolicy,
	profiles map[string]*operatorv1alpha1.TargetProfile, subs []operatorv1alpha1.Subscription) []*operatorv1alpha1.TunnelTargetPolicy {
	if !workload.TunnelEnabled(cluster) {
		return nil
	}
	profileNames, subNames := map[string]bool{}, map[string]bool{}
	for name := range profiles {
		profileNames[name] = true
	}
	for i := range subs {
		subNames[subs[i].Name] = true
	}
	var out []*operatorv1alpha1.TunnelTargetPolicy
	for i := range all {
		p := &all[i]
		if p.DeletionTimestamp.IsZero() && tunnelpolicy.Selects(p, cluster.Name, cluster.Labels) &&
			tunnelpolicy.Check(p, profileNames, subNames) == nil {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// addTunnelTargetMatches renders the policies into the fleet's configuration, which every pod's is cut from
// (render.Subset gives each pod all of them). A policy that does not render is logged and left out: its own
// status says what is wrong with it.
func addTunnelTargetMatches(ctx context.Context, w *world, policies []*operatorv1alpha1.TunnelTargetPolicy,
	subs []operatorv1alpha1.Subscription) {
	if len(policies) == 0 || w.renderErr != nil {
		return
	}
	byName := make(map[string]*operatorv1alpha1.Subscription, len(subs))
	for i := range subs {
		byName[subs[i].Name] = &subs[i]
	}
	tunnel, skips := render.TunnelTargetMatches(policies, byName, w.rendered.Outputs, w.conn)
	for _, skip := range skips {
		log.FromContext(ctx).Info("tunnel target policy left out", "policy", skip.Name, "reason", skip.Err.Error())
	}
	if len(tunnel.TunnelTargetMatches) == 0 {
		return
	}
	// The targets are in their Normalize form already, and their map is the fleet memory's: only what is added
	// is normalized, into new maps.
	rest := gnmic.Config{TunnelTargetMatches: tunnel.TunnelTargetMatches, Subscriptions: map[string]gnmic.SubscriptionConfig{}}
	for name, s := range w.rendered.Subscriptions {
		rest.Subscriptions[name] = s
	}
	for name, s := range tunnel.Subscriptions {
		rest.Subscriptions[name] = s
	}
	rest = rest.Normalize()
	w.rendered.TunnelTargetMatches, w.rendered.Subscriptions = rest.TunnelTargetMatches, rest.Subscriptions
}

// tunnelSecrets are the Secrets the policies' profiles reference (credentials and TLS), and the TLS ones alone.
func tunnelSecrets(policies []*operatorv1alpha1.TunnelTargetPolicy, profiles map[string]*operatorv1alpha1.TargetProfile) (all, tls []string) {
	for _, name := range render.TunnelProfiles(policies) {
		p := profiles[name]
		if p == nil {
			continue
		}
		all = append(all, p.Spec.CredentialsRef)
		if p.Spec.TLS != nil && p.Spec.TLS.SecretRef != "" {
			all = append(all, p.Spec.TLS.SecretRef)
			tls = append(tls, p.Spec.TLS.SecretRef)
		}
	}
	return all, tls
}

// ensureTunnelService keeps the Service <cluster>-tunnel that devices dial, and deletes it when the tunnel
// server stops. (Its certificates are kept by observe: credentials.TunnelTLS.)
func (r *Reconciler) ensureTunnelService(ctx context.Context, cluster *operatorv1alpha1.Cluster) error {
	svc := workload.TunnelService(cluster)
	if svc == nil {
		return r.deleteControlledService(ctx, cluster, workload.TunnelServiceName(cluster))
	}
	return owned.Ensure(ctx, r.owned, cluster, svc, &corev1.Service{}, keepAllocated)
}

// runtimeOf splits what a collector reported into the targets it was sent and the dial-in devices it runs
// through its tunnel server (their configuration carries tunnel-target-type).
func runtimeOf(reported []gnmic.TargetState) collector.Runtime {
	targets := make(map[string]gnmic.TargetStatus, len(reported))
	var tunnel map[string]collector.TunnelTarget
	for _, t := range reported {
		if typ := t.TunnelTargetType(); typ != "" {
			if tunnel == nil {
				tunnel = map[string]collector.TunnelTarget{}
			}
			tunnel[t.Name] = collector.TunnelTarget{Type: typ, Status: t.State}
			continue
		}
		targets[t.Name] = t.State
	}
	return collector.NewRuntime(targets, tunnel)
}

// reportTunnelTargets sets, for every pod whose collector was read, the dial-in devices it runs, attributed to
// the policy the collector matched them with; a pod not read keeps what its status said.
func reportTunnelTargets(w *world, pushed pushResults, runtimes collectorRuntimes) {
	for ordinal, pp := range pushed.pods {
		rt, read := runtimes[ordinal]
		if !read || !rt.Known {
			continue
		}
		pp.status.TunnelTargetsCount = int32(len(rt.Tunnel))
		pp.status.TunnelTargets = nil
		ids := make([]string, 0, len(rt.Tunnel))
		for id := range rt.Tunnel {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids[:min(len(ids), operatorv1alpha1.MaxTunnelTargetsListed)] {
			tt := rt.Tunnel[id]
			state := tt.Status.State
			if tt.Status.FailedReason != "" {
				state += ": " + truncate(tt.Status.FailedReason, 256)
			}
			pp.status.TunnelTargets = append(pp.status.TunnelTargets, operatorv1alpha1.TunnelTargetStatus{
				ID: id, Type: tt.Type, Collecting: tt.Status.Collecting(), State: state,
				Policy: tunnelpolicy.MatchedBy(w.rendered.TunnelTargetMatches, tt.Type, id),
			})
		}
	}
}

// clustersWithTunnel wakes every Cluster of the object's namespace that runs a tunnel server: a
// TunnelTargetPolicy, or a Subscription, TargetProfile or Secret one may use, changed. Policies are few and
// their selection may have changed in either direction, so no finer mapping is attempted.
func (m clusterMappings) clustersWithTunnel(ctx context.Context, obj client.Object) []reconcile.Request {
	var clusters operatorv1alpha1.ClusterList
	if err := m.List(ctx, &clusters, client.InNamespace(obj.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil {
		log.FromContext(ctx).Error(err, "list clusters for a tunnel target policy event", "namespace", obj.GetNamespace())
		return nil
	}
	var names []string
	for i := range clusters.Items {
		if workload.TunnelEnabled(&clusters.Items[i]) {
			names = append(names, clusters.Items[i].Name)
		}
	}
	return requests(obj.GetNamespace(), names...)
}

// alsoTunnel adds to a mapping the Clusters that run a tunnel server (clustersWithTunnel).
func (m clusterMappings) alsoTunnel(f handler.MapFunc) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		out := f(ctx, obj)
		for _, req := range m.clustersWithTunnel(ctx, obj) {
			if !slices.Contains(out, req) {
				out = append(out, req)
			}
		}
		return out
	}
}
