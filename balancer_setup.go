package main

import (
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/gnmic-operator/gnmic-operator/controllers/balancer"
)

// setupBalancer registers the Balancer controller (docs/balancer.md); under sharding each Balancer runs on
// the one replica that shard assigns it to (nil: this replica runs every Balancer).
func setupBalancer(mgr ctrl.Manager, shard balancer.Assigner) error {
	r, err := balancer.NewReconciler(mgr)
	if err != nil {
		return fmt.Errorf("set up balancer controller: %w", err)
	}
	r.Shard = shard
	if err := r.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up balancer controller: %w", err)
	}
	return nil
}
