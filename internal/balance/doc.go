// Package balance decides how many replicas each of several workloads (the
// targets, for example one collector StatefulSet per zone) runs so that
// together they run a total, the way a Balancer spreads its own scale over
// the Scale subresources of its targets.
//
// Every target has a minimum and optionally a maximum. Balance decides in
// three steps, the last only when a startup timeout is set:
//
//  1. Minimums. Every target gets its minimum, whatever the policy, its place
//     in the policy and the total. When the minimums add up to more than the
//     total, every target gets exactly its minimum and Result.Excess says by
//     how many the total is exceeded.
//  2. Policy. The rest of the total goes by the policy, never above a
//     target's maximum. Priority fills the targets in the given order, each
//     up to its maximum, then the next; a target missing from the order gets
//     its minimum only. Proportional gives every target a quota,
//     total·proportion/Σproportions, and rounds the quotas to whole replicas
//     by largest remainder, ties to the first name, which minimises the
//     largest difference between a target's replicas and its quota. A target
//     held at its minimum or maximum drops out and the others share the rest
//     by their proportions: a quota is clamp(level·proportion, min, max), at
//     the one level where the quotas add up to the total. A target with
//     proportion 0 gets its minimum only. What no target can take, because
//     every target the policy may grow is at its maximum, is Result.Unplaced.
//     The outcome of these two steps is each target's Base.
//  3. Fallback. A target is blocked when its oldest not-started pod has
//     waited longer than the timeout. Every replica of a blocked target's Base
//     that has not started counts as missing: Base minus started pods, at
//     least 0, which includes replicas not created yet. The policy then
//     spreads the total plus every missing replica once more, with each
//     blocked target held at its Base (its pods may still start, and it takes
//     no replacements) and each other target starting from its Base, so that
//     replacements only add to it, go where the policy sends them and respect
//     its maximum. Replacements that find no room are in Unplaced. Once a
//     blocked target's pods have started (none is left not started, or the
//     oldest has waited no longer than the timeout) it is no longer blocked
//     and the next call removes its replacements.
//
// Allocation.Desired is the count the controller writes to each target's
// Scale subresource: Base plus the replacements the target holds.
//
// Guarantees, all checked by the tests of this package: every target gets at
// least its minimum and never more than its maximum; without missing
// replicas the desired counts add up to exactly the total whenever it lies
// between the sum of the minimums and the capacity (the maximums of the
// targets the policy names plus the minimums of the others); the result does
// not depend on the order of the targets, nor on their current scale. When
// the total changes by k within those bounds, Priority changes the targets
// by exactly |k| replicas in all, each in the direction of k. Proportional
// cannot promise that together with the smallest deviation from the quotas
// (largest remainder has the Alabama paradox: one more replica in total can
// take one from a target). Every quota moves in the direction of k, so every
// target moves that way or by exactly one replica against it, and the
// targets change by |k| plus twice the number moving against it, at most
// |k| + 2·(targets - 1).
//
// Balance keeps no memory between calls. A target that holds only
// replacements and whose replacement pods do not start either becomes
// blocked, takes no more and goes back to its Base; once its stuck pods are
// gone it is no longer blocked and may be given replacements again, to be
// found blocked a timeout later.
//
// The package knows nothing of Kubernetes: a reconciler passes each target's
// limits, proportion and pod counts, and writes each Desired to its target.
package balance
