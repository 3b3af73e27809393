// Package handover decides what each collector pod of a Cluster is sent next, given what placement wants it
// to hold, what it acknowledged and what its collector really runs.
//
// The real gNMIc collector acknowledges an apply before acting on it, works target changes off one at a
// time, and silently drops target changes beyond a 128-entry buffer. Three rules follow, and Decide applies
// them to plain values (no Kubernetes, no HTTP):
//
//   - Batches: a collector is sent at most BatchSize target changes (adds, removals, updates) beyond the
//     changes it has not acted on yet, so its buffer never overflows. What does not fit waits for a later
//     step; removals go first, then updates, then adds, each in name order.
//   - Break before make, confirmed: a target moves onto its new collector only once no other collector the
//     operator can reach still holds it, that is none was sent it and none lists it in its running state
//     (the only proof a removal was acted on). After DropTimeout the move goes ahead anyway and is reported as
//     a possible overlap.
//   - Repair: a collector that has acted on none of its outstanding changes for RepairAfter (doubling with
//     each repair of a target) dropped them. A target it was sent but does not run is removed in one step
//     and added again in a later one; a target it runs but was not sent (a dropped removal) is reported as
//     stale. Judging by the collector's progress, not by how long one target has waited, keeps a slow
//     collector that still works off a long queue from being "repaired" into overflowing.
//
// The memory between two decisions (how long each move has waited, how long each collector has been quiet)
// travels in Memory: the caller keeps the Memory a Decision returns and passes it to the next Decide.
package handover
