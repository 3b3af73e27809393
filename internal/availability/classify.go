package availability

import (
	"sort"
	"time"
)

// Pod is what Classify needs to know about one collector pod.
type Pod struct {
	// Ordinal of the pod in its StatefulSet.
	Ordinal int
	// Ready is whether the pod can hold targets: its containers are ready (the Ready condition would wait
	// for the pod's configuration, which only a ready pod receives).
	Ready bool
	// UnreadySince is when the pod stopped being ready (that condition's last transition), or when it was
	// first seen missing. Zero means unknown: the grace period starts now.
	UnreadySince time.Time
}

// Input is the fleet as observed.
type Input struct {
	// Replicas is the desired number of pods: ordinals 0..Replicas-1, unless Desired is set.
	Replicas int
	// Desired, when not nil, lists the desired ordinals in place of 0..Replicas-1: the pod numbers of a
	// Cluster spread over domains, each domain's pods numbered from its own base.
	Desired []int
	// Pods are the pods that exist, at most one per ordinal. A desired ordinal without an entry is missing
	// since now.
	Pods []Pod
	// Grace is how long an unready pod keeps its targets.
	Grace time.Duration
	// Now is the time of the decision.
	Now time.Time
}

// Result says what each desired pod can do.
type Result struct {
	// Ready ordinals can hold and receive targets. Sorted.
	Ready []int
	// Holding ordinals are unready within their grace period: they keep their targets and receive none.
	// Sorted.
	Holding []int
	// GraceEnds is the earliest end of a grace period among Holding pods (zero when none): the time to look
	// again.
	GraceEnds time.Time
}

// Classify sorts the desired pods into ready, holding (in grace) and gone (everything else).
func Classify(in Input) Result {
	byOrdinal := make(map[int]Pod, len(in.Pods))
	for _, p := range in.Pods {
		byOrdinal[p.Ordinal] = p
	}
	var r Result
	for _, ordinal := range in.desired() {
		p, seen := byOrdinal[ordinal]
		if seen && p.Ready {
			r.Ready = append(r.Ready, ordinal)
			continue
		}
		since := in.Now
		if seen && !p.UnreadySince.IsZero() && p.UnreadySince.Before(in.Now) {
			since = p.UnreadySince
		}
		ends := since.Add(in.Grace)
		if !ends.After(in.Now) {
			continue
		}
		r.Holding = append(r.Holding, ordinal)
		if r.GraceEnds.IsZero() || ends.Before(r.GraceEnds) {
			r.GraceEnds = ends
		}
	}
	sort.Ints(r.Ready)
	sort.Ints(r.Holding)
	return r
}

// desired are the desired ordinals: Desired, or 0..Replicas-1.
func (in Input) desired() []int {
	if in.Desired != nil {
		return in.Desired
	}
	out := make([]int, in.Replicas)
	for i := range out {
		out[i] = i
	}
	return out
}
