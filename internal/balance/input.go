package balance

import (
	"math"
	"time"
)

// Policy names how the replicas above every target's minimum are spread.
type Policy string

const (
	// Priority fills the targets one after the other, in Input.Order, each up
	// to its maximum.
	Priority Policy = "priority"
	// Proportional spreads the replicas by the targets' proportions.
	Proportional Policy = "proportional"
)

// MaxReplicas is the largest count Validate accepts for replicas, a minimum,
// a maximum, a proportion or an observed pod count: what a Scale subresource
// (an int32) can hold.
const MaxReplicas = math.MaxInt32

// Input is everything Balance needs to know.
type Input struct {
	// Replicas is the total to spread over the targets, the Balancer's own
	// scale.
	Replicas int
	// Targets are the workloads to spread the replicas over; order does not
	// matter.
	Targets []Target
	// Policy chooses the rule for the replicas above the minimums.
	Policy Policy
	// Order lists target names from the first to fill to the last. Only the
	// Priority policy reads it. A target that is not listed gets its minimum
	// and nothing more.
	Order []string
	// StartupTimeout is how long a replica may stay not started before it
	// counts as missing and is replaced in other targets. Zero turns the
	// fallback off.
	StartupTimeout time.Duration
}

// Target is one workload with a Scale subresource, and what its pods are
// doing now.
type Target struct {
	// Name identifies the target in Order and in the Result.
	Name string
	// Min is the fewest replicas the target is ever given, whatever the
	// policy and the total.
	Min int
	// Max is the most replicas the target is ever given; nil means no
	// maximum. A maximum of 0 keeps the target empty.
	Max *int
	// Proportion is the target's share under the Proportional policy,
	// relative to the other targets' proportions. A target with proportion 0
	// gets its minimum and nothing more. Priority ignores it.
	Proportion int
	// Started counts the target's pods that have started (are running).
	Started int
	// NotStarted counts the target's pods that exist but have not started
	// yet, for example pods that cannot be scheduled.
	NotStarted int
	// Waiting is how long the oldest of the NotStarted pods has been waiting
	// to start. It is ignored when NotStarted is 0.
	Waiting time.Duration
}
