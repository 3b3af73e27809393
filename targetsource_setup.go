package main

import (
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/gnmic-operator/gnmic-operator/controllers/targetsource"
)

// setupTargetSource registers the TargetSource controller (docs/target-sources.md). It runs on the leader
// under leader election; under sharding each TargetSource is synced by the one replica that shard assigns it
// to, as a Balancer is (nil: this replica syncs every TargetSource).
func setupTargetSource(mgr ctrl.Manager, shard targetsource.Assigner) error {
	r := targetsource.NewReconciler(mgr)
	r.Shard = shard
	if err := r.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up targetsource controller: %w", err)
	}
	return nil
}
