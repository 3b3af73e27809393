package main

import (
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/gnmic-operator/gnmic-operator/controllers"
)

// setupBalancer registers the Balancer controller (docs/balancer.md); under sharding each Balancer runs on
// one replica.
func setupBalancer(mgr ctrl.Manager, sharding *controllers.Sharding) error {
	r, err := controllers.NewBalancerReconciler(mgr)
	if err != nil {
		return fmt.Errorf("set up balancer controller: %w", err)
	}
	r.Sharding = sharding
	if err := r.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up balancer controller: %w", err)
	}
	return nil
}
