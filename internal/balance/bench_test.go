package balance

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkBalance measures one reconcile's decision: three zones, as most
// Balancers have, and fifty targets, far more than any will.
func BenchmarkBalance(b *testing.B) {
	for _, targets := range []int{3, 50} {
		for _, policy := range []Policy{Priority, Proportional} {
			in := Input{Replicas: 40 * targets, Policy: policy, StartupTimeout: time.Minute}
			for i := range targets {
				t := Target{Name: fmt.Sprintf("zone-%02d", i), Min: 1, Max: new(60), Proportion: 1 + i%3, Started: 30}
				if i == 0 {
					t.NotStarted, t.Waiting = 10, time.Hour
				}
				in.Targets = append(in.Targets, t)
				in.Order = append(in.Order, t.Name)
			}
			b.Run(fmt.Sprintf("%s/%d targets", policy, targets), func(b *testing.B) {
				for b.Loop() {
					if _, err := Balance(in); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
