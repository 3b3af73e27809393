// Package placement decides which collector pod collects which target.
//
// The model is bounded-load rendezvous hashing. Every target has a score for
// every pod (see Score); the pod a target prefers is the one where its score
// is highest. A capacity bounds the load of every pod, counted in weight units
// (a target weighs 1 unless told otherwise). Place works in three steps:
//
//  1. Capacity is the fixed podCapacity when one is set, otherwise the even
//     share ceil(total weight / pods), widened by the heaviest weight minus one
//     so that every target fits somewhere (exactly ceil(targets / pods) when
//     every weight is 1).
//  2. A target stays on its current pod while that pod is available and has
//     room. A pod whose current targets exceed the capacity keeps them in
//     descending order of their score for that pod while they fit, so it sheds
//     its lowest-scoring targets.
//  3. The other targets, in alphabetical order, go to the highest-scoring pod
//     that still has room for their weight. A target that fits nowhere stays
//     unassigned.
//
// A target may also have a last pod: the pod it had to leave, or lost, while
// that pod was not available (Input.Last, which Lasts computes from a
// placement for the next one). Step 2 then runs in three rounds: the targets
// on the pod they belong on stay as above; the targets whose last pod is
// available again go back to it while it has room; the targets still away
// from their last pod stay where they are while there is room. A fleet whose
// pods all restart, and come back in any order, so ends where it was.
//
// Guarantees, all proven by the tests of this package: no pod's load ever
// exceeds the capacity, not even while current assignments are kept; with
// every weight 1 and no target away from its last pod, the number of moved
// targets equals the lower bound (a target moves only when its pod is gone or
// its pod must shed it); a restarted fleet ends where it was; the result does
// not depend on the order of the input; and a target's score for a pod
// depends on nothing but the target's name and the pod's ordinal.
//
// The score function is part of this package's contract. Changing it changes
// which pod every target prefers: an operator upgrade that carried a new score
// function would reshuffle every fleet placed afresh (for example after its
// Target status was lost) and change which targets every later scaling step
// moves. Score is pinned by golden values in testdata/scores.golden.
//
// The package knows nothing of Kubernetes: a reconciler passes the ready pod
// ordinals, the targets and their current pods, and applies the Result.
package placement
