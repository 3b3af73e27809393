package controllers

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

// writeTargetStatuses records in each Target's status.clusterStates where this Cluster collects it, writing
// only the Targets whose entry changed, and removes the entry from Targets the Cluster no longer selects.
func (r *ClusterReconciler) writeTargetStatuses(ctx context.Context, cluster *operatorv1alpha1.Cluster, w *world,
	plan placementPlan, states targetStates) error {
	selected := map[string]bool{}
	for _, st := range w.selection.Targets {
		selected[st.Target.Name] = true
	}
	now := metav1.NewTime(r.now())
	for i := range w.targets {
		t := &w.targets[i]
		have, had := t.Status.ClusterStates[cluster.Name]
		if !selected[t.Name] {
			if had {
				if err := r.patchTargetState(ctx, t, cluster.Name, nil); err != nil {
					return err
				}
				r.written.Delete(writtenKey(cluster, t))
			}
			continue
		}
		want := operatorv1alpha1.TargetClusterState{State: operatorv1alpha1.TargetUnassigned}
		if ordinal, ok := plan.assignment(t.Name); ok {
			want.Pod = workload.PodName(cluster, ordinal)
			want.State = operatorv1alpha1.TargetAssigned
			if _, held := plan.held[t.Name]; held {
				want.State = operatorv1alpha1.TargetOrphaned
			}
			want.ConnectionState = states.byTarget[t.Name].ConnectionState
		}
		if had && sameState(have, want) {
			continue
		}
		// The cache may not show this reconcile's previous write yet: what was written last is known here.
		if last, ok := r.written.Load(writtenKey(cluster, t)); ok && sameState(last.(operatorv1alpha1.TargetClusterState), want) {
			continue
		}
		want.LastUpdated = now
		if err := r.patchTargetState(ctx, t, cluster.Name, &want); err != nil {
			return err
		}
		r.written.Store(writtenKey(cluster, t), want)
	}
	return nil
}

func sameState(a, b operatorv1alpha1.TargetClusterState) bool {
	return a.Pod == b.Pod && a.State == b.State && a.ConnectionState == b.ConnectionState
}

// writtenKey identifies a Target (by UID: a recreated Target starts afresh) within a Cluster.
func writtenKey(cluster *operatorv1alpha1.Cluster, t *operatorv1alpha1.Target) string {
	return cluster.Namespace + "/" + cluster.Name + "/" + string(t.UID)
}

// patchTargetState sets (or, with nil, removes) one Cluster's entry of a Target's status, with optimistic
// locking so that two Clusters writing the same Target never lose each other's entry.
func (r *ClusterReconciler) patchTargetState(ctx context.Context, t *operatorv1alpha1.Target, cluster string,
	state *operatorv1alpha1.TargetClusterState) error {
	base := t.DeepCopy()
	if state == nil {
		delete(t.Status.ClusterStates, cluster)
	} else {
		if t.Status.ClusterStates == nil {
			t.Status.ClusterStates = map[string]operatorv1alpha1.TargetClusterState{}
		}
		t.Status.ClusterStates[cluster] = *state
	}
	t.Status.Clusters, t.Status.State = summarize(t.Status.ClusterStates)
	if err := r.Status().Patch(ctx, t, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("write status of target %s: %w", t.Name, err)
	}
	return nil
}

// summarize gives the Target's printer columns: how many Clusters hold it and its worst state.
func summarize(states map[string]operatorv1alpha1.TargetClusterState) (int32, string) {
	rank := map[string]int{operatorv1alpha1.TargetAssigned: 0, operatorv1alpha1.TargetOrphaned: 1, operatorv1alpha1.TargetUnassigned: 2}
	var holding int32
	worst := ""
	for _, s := range states {
		if s.State == operatorv1alpha1.TargetAssigned {
			holding++
		}
		if worst == "" || rank[s.State] > rank[worst] {
			worst = s.State
		}
	}
	return holding, worst
}

// forgetCluster removes a deleted Cluster's entries from the status of the Targets of its namespace.
func (r *ClusterReconciler) forgetCluster(ctx context.Context, namespace, cluster string) error {
	var targets operatorv1alpha1.TargetList
	if err := r.List(ctx, &targets, client.InNamespace(namespace)); err != nil {
		return fmt.Errorf("list targets: %w", err)
	}
	for i := range targets.Items {
		if _, ok := targets.Items[i].Status.ClusterStates[cluster]; ok {
			if err := r.patchTargetState(ctx, &targets.Items[i], cluster, nil); err != nil {
				return err
			}
		}
	}
	return nil
}
