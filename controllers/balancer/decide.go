package balancer

import (
	"errors"
	"time"

	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/balance"
)

// balancerPlan is what the balance core decided for a Balancer, or why it could not.
type balancerPlan struct {
	// replicas is the Balancer's spec.replicas.
	replicas int
	result   balance.Result
	// allocations are result's by target name.
	allocations map[string]balance.Allocation
	// err is the core's refusal of the input (see balance.Input.Validate); nothing is written then.
	err error
}

// errNoPolicyName is what a Balancer without spec.policy.policyName says. The API refuses one on create and
// on update, but a Balancer stored while the policy's fields were name, priority and proportional has lost
// them since they took the Kubernetes Balancer KEP's names (the API server prunes fields it does not know).
var errNoPolicyName = errors.New("spec.policy.policyName is not set: a Balancer written with the policy's old " +
	"field names (name, priority, proportional) lost them when they were renamed; apply it again with " +
	"policyName, priorities and proportions")

// decide runs the balance core over the targets that take part (see observedTarget.balanced): a target left
// alone is not in the input, so the others share the replicas.
func decide(b *operatorv1alpha1.Balancer, targets []observedTarget, now time.Time) balancerPlan {
	in := balanceInput(b, targets, now)
	plan := balancerPlan{replicas: in.Replicas}
	if b.Spec.Policy.PolicyName == "" {
		plan.err = errNoPolicyName
	} else {
		plan.result, plan.err = balance.Balance(in)
	}
	plan.allocations = make(map[string]balance.Allocation, len(plan.result.Targets))
	for _, a := range plan.result.Targets {
		plan.allocations[a.Name] = a
	}
	return plan
}

// balanceInput translates the Balancer's spec and what its targets' pods do into the core's terms. A
// priority order keeps only the targets that take part, in its order.
func balanceInput(b *operatorv1alpha1.Balancer, targets []observedTarget, now time.Time) balance.Input {
	in := balance.Input{Replicas: int(balancerReplicas(b)), Policy: balance.Policy(b.Spec.Policy.PolicyName)}
	if f := b.Spec.Policy.Fallback; f != nil {
		in.StartupTimeout = f.StartupTimeout.Duration
	}
	taking := map[string]bool{}
	for i := range targets {
		t := &targets[i]
		if !t.balanced() {
			continue
		}
		taking[t.spec.Name] = true
		bt := balance.Target{
			Name:       t.spec.Name,
			Min:        int(ptr.Deref(t.spec.MinReplicas, 0)),
			Started:    int(t.pods.ready),
			NotStarted: int(t.pods.notStarted),
			Waiting:    t.pods.waiting(now),
		}
		if t.spec.MaxReplicas != nil {
			bt.Max = ptr.To(int(*t.spec.MaxReplicas))
		}
		if p := b.Spec.Policy.Proportions; p != nil {
			bt.Proportion = int(p.TargetProportions[t.spec.Name])
		}
		in.Targets = append(in.Targets, bt)
	}
	if p := b.Spec.Policy.Priorities; p != nil {
		for _, name := range p.TargetOrder {
			if taking[name] {
				in.Order = append(in.Order, name)
			}
		}
	}
	return in
}

// balancerReplicas is spec.replicas, 1 when unset (the API's default).
func balancerReplicas(b *operatorv1alpha1.Balancer) int32 {
	if b.Spec.Replicas == nil {
		return 1
	}
	return *b.Spec.Replicas
}
