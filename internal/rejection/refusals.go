package rejection

import "time"

// Outcome is what one pod's push did in one reconcile.
type Outcome int

const (
	// NotTried: nothing was sent to the pod (it is not ready, or no configuration could be rendered). What
	// is known of it stays as it was.
	NotTried Outcome = iota
	// Accepted: the pod's collector holds the configuration it was sent, acknowledged now or before.
	Accepted
	// Refused: the push failed for reasons of the pod's own: its collector refused what other collectors
	// take, or could not be reached.
	Refused
	// SharedRejection: the collector refused the part every pod receives alike, which no collector of the
	// Cluster accepted. The configuration is at fault, not the pod.
	SharedRejection
)

// Track is since when each pod has refused its configuration, after a reconcile whose pushes had the given
// outcomes (keyed by the pod's identity, its UID). A pod that refuses keeps the time of its first refusal;
// one that accepts, or whose refusal turns out to be the configuration's fault, is forgotten (a later
// refusal of its own starts again: targets only ever wait longer, never move early); a pod not tried keeps
// its time. Pods absent from outcomes are gone and forgotten, so the result never outgrows the fleet.
func Track[K comparable](since map[K]time.Time, outcomes map[K]Outcome, now time.Time) map[K]time.Time {
	out := make(map[K]time.Time)
	for pod, outcome := range outcomes {
		was, refusing := since[pod]
		switch outcome {
		case Refused:
			if !refusing {
				was = now
			}
			out[pod] = was
		case NotTried:
			if refusing {
				out[pod] = was
			}
		}
	}
	return out
}

// Pods are the pods placement may use, and since when those of them that refuse their configuration do.
type Pods struct {
	// Ready are the ordinals of the pods placement would use.
	Ready []int
	// RefusingSince is when each refusing pod, by ordinal, began refusing; pods absent accept.
	RefusingSince map[int]time.Time
	// Grace is how long a refusing pod keeps its place: the Cluster's grace period for unready pods.
	Grace time.Duration
	// Now is the time of the decision.
	Now time.Time
}

// Exclusion is what Exclude decided.
type Exclusion struct {
	// Excluded are the ready pods left out of placement, with since when they refuse. Their targets go to
	// other pods.
	Excluded map[int]time.Time
	// GraceEnds is the earliest end of a grace period still running (zero when none): the time to look again.
	GraceEnds time.Time
}

// Exclude leaves out of placement every ready pod that has refused its configuration for the grace period
// or longer. When that is every ready pod, none is left out: no pod takes its configuration, so moving
// targets would help nothing (the cause is likely shared, as with every collector falling silent at once).
func Exclude(in Pods) Exclusion {
	out := Exclusion{Excluded: map[int]time.Time{}}
	for _, ordinal := range in.Ready {
		since, refusing := in.RefusingSince[ordinal]
		if !refusing {
			continue
		}
		if ends := since.Add(in.Grace); ends.After(in.Now) {
			if out.GraceEnds.IsZero() || ends.Before(out.GraceEnds) {
				out.GraceEnds = ends
			}
			continue
		}
		out.Excluded[ordinal] = since
	}
	if len(in.Ready) > 0 && len(out.Excluded) == len(in.Ready) {
		out.Excluded = map[int]time.Time{}
	}
	return out
}
