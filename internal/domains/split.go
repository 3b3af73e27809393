package domains

import (
	"fmt"
	"time"

	"github.com/gnmic-operator/gnmic-operator/internal/balance"
)

// Input is everything Split needs to know.
type Input struct {
	// Replicas is the Cluster's spec.replicas, the total to spread.
	Replicas int
	// Domains in the order the Cluster declares them: the order gives each
	// domain's pods their numbers (Slot).
	Domains []Domain
	// Policy is balance.Priority or balance.Proportional; empty spreads the
	// replicas evenly (proportional, every domain 1).
	Policy balance.Policy
	// Order lists domain names, first to fill first (Priority only).
	Order []string
	// Proportions maps domain names to shares (Proportional only). A domain
	// left out gets its minimum only.
	Proportions map[string]int
	// StartupTimeout turns the fallback on when above zero.
	StartupTimeout time.Duration
}

// Domain is one failure domain and what its pods do now.
type Domain struct {
	Name string
	// Min and Max bound the domain's replicas; a nil Max means no maximum.
	Min int
	Max *int
	// Started counts the domain's pods that run, NotStarted those that exist
	// and do not; Waiting is how long the oldest not-started pod has waited.
	Started, NotStarted int
	Waiting             time.Duration
}

// Result is the replicas of every domain.
type Result struct {
	// Domains holds one Allocation per input domain, in the input's order.
	Domains []balance.Allocation
	// Unplaced, Excess and Missing are the balance core's totals (see
	// balance.Result).
	Unplaced, Excess, Missing int
}

// Split decides every domain's replicas; the package documentation says how.
func Split(in Input) (Result, error) {
	bin := balance.Input{Replicas: in.Replicas, Policy: in.Policy, Order: in.Order, StartupTimeout: in.StartupTimeout}
	if bin.Policy == "" {
		bin.Policy = balance.Proportional
	}
	for _, d := range in.Domains {
		t := balance.Target{Name: d.Name, Min: d.Min, Max: d.Max, Started: d.Started, NotStarted: d.NotStarted, Waiting: d.Waiting}
		switch {
		case in.Policy == "":
			t.Proportion = 1
		case bin.Policy == balance.Proportional:
			t.Proportion = in.Proportions[d.Name]
		}
		bin.Targets = append(bin.Targets, t)
	}
	res, err := balance.Balance(bin)
	if err != nil {
		return Result{}, fmt.Errorf("split replicas over domains: %w", err)
	}
	byName := make(map[string]balance.Allocation, len(res.Targets))
	for _, a := range res.Targets {
		byName[a.Name] = a
	}
	out := Result{Unplaced: res.Unplaced, Excess: res.Excess, Missing: res.Missing}
	for _, d := range in.Domains {
		out.Domains = append(out.Domains, byName[d.Name])
	}
	return out, nil
}

// Slots are the numbers of the pods every domain should run: ordinals 0 to
// Desired-1 of each, in domain order.
func (r Result) Slots() []int {
	var out []int
	for i, a := range r.Domains {
		for o := 0; o < a.Desired; o++ {
			out = append(out, Slot(i, o))
		}
	}
	return out
}

// NextBlock is how long until the first domain that is not blocked yet
// becomes blocked if its pods keep waiting: the soonest the split may change
// without any pod changing. Zero when no such domain waits or the fallback is
// off.
func NextBlock(in Input) time.Duration {
	if in.StartupTimeout <= 0 {
		return 0
	}
	var next time.Duration
	for _, d := range in.Domains {
		if d.NotStarted == 0 || d.Waiting > in.StartupTimeout {
			continue
		}
		// balance blocks a domain once Waiting exceeds the timeout: look just after.
		left := in.StartupTimeout - d.Waiting + time.Millisecond
		if next == 0 || left < next {
			next = left
		}
	}
	return next
}

// WaitingSince is since when a domain has been waiting for pods to start, carried from one look to the next:
// prev is what the last look said (zero when the domain was not waiting), unstarted counts the domain's
// pods that exist and have not started plus its desired pods that do not exist, oldest is when the
// longest-waiting existing pod began to wait (zero when none does). The wait goes on, from prev, as long as
// some pod of the domain has not started: a pod that is deleted and recreated (a lost Node's pods removed by
// the pod garbage collector, an eviction) does not start the startup timeout again, nor does the moment
// between the deletion and the new pod. It ends (zero) once every desired pod has started.
func WaitingSince(prev time.Time, unstarted int, oldest, now time.Time) time.Time {
	switch {
	case unstarted == 0:
		return time.Time{}
	case !prev.IsZero() && (oldest.IsZero() || prev.Before(oldest)):
		return prev
	case !oldest.IsZero():
		return oldest
	default:
		return now
	}
}
