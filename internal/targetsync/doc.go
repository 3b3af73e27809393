// Package targetsync decides what one sync of a TargetSource writes: which Targets to create, update, mark
// missing or delete, given the Targets the inventory maps to and the Targets that exist. It is pure: the
// controller lists the Targets, calls Plan and writes what it says.
//
// The rules, each a test in plan_test.go:
//   - an answer that looks truncated (fewer records than it announced, or fewer than minPercent of the last
//     sync's) plans nothing;
//   - a Target that is not this TargetSource's is never written, only reported as a conflict;
//   - an owned Target whose device is missing is marked with the sync it was first missing from, and deleted
//     at the sync that makes it missing deleteAfterMisses syncs in a row; a device that comes back unmarks it;
//   - an owned Target is written only when what it should be differs from what it is.
package targetsync
