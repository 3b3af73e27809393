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
// # Filling by weight
//
// The steps above are FillByName, the default. Input.Fill = FillByWeight
// balances weights instead of merely counting them:
//
//   - The automatic capacity is the balanced capacity: the even share
//     ceil(total/pods) plus a slack of min(heaviest-1, floor(mean/25)), or the
//     heaviest weight if larger. FillByName widens by heaviest-1 whatever the
//     mean, which lets pods of a heavy-tailed fleet fill 20 % above the mean.
//   - A pod whose targets weigh more than the room it has sheds the fewest
//     targets that bring it within, choosing light ones first (see
//     keepAllButFewest); a pod within capacity keeps all its targets.
//   - The targets without a pod are placed heaviest first, alphabetically
//     among equal weights, each on its highest-scoring pod with room. Heavy
//     targets go while every pod has room for them, light ones fill the
//     gaps. Equal weights go by name, not by score, so that with every
//     weight 1 the order is FillByName's.
//   - With automatic capacity, when a target finds no room (the pods' room
//     is scattered in pieces too small for it, say a heavy target joining a
//     full fleet), the capacity is raised to the lowest at which every
//     target has room, found by bisection between the balanced capacity and
//     FillByName's widened one, at which everything fits whatever was kept.
//     Result.Capacity is the capacity used.
//
// Moves are at the lower bound, whatever the weights, when no target is away
// from its last pod: len(Result.Moves) == Result.LowerBoundMoves for the
// capacity used. Every move is forced: a target whose pod is gone moves, and
// so does every target an over-capacity pod sheds; a pod within capacity
// sheds nothing. An over-capacity pod sheds exactly k targets, k the fewest
// whose weights reach its excess (counted heaviest first, as
// LowerBoundMoves counts them), and none of them comes back: any k-1 of its
// targets weigh less than the excess, so once k are shed its room is less
// than the weight of each. Targets without a current pod are not moves.
// In weight units, what leaves a pod is at least its excess, as for any
// placement within the capacity, and less than the excess plus the
// heaviest target it sheds.
//
// With every weight 1 FillByWeight is FillByName, result for result: the
// balanced capacity is ceil(targets/pods), the fill order is the name
// order, shedding keeps the best-scoring, and the fill never needs a raise.
//
// A result is a fixed point (fed back as Current, nothing moves) when its
// capacity was not raised. A raised capacity can come down on the next
// placement, with the moves that takes, again at the lower bound. Fed back
// again and again, such results settle within a few placements in the
// property tests, the capacity never rising (a bisection over a feasibility
// that need not be monotone promises no more than that it tests).
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
