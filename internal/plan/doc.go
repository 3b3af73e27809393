// Package plan is the `plan` subcommand: a what-if planner that runs the
// operator's placement on a scenario read from standard input, without a
// cluster.
//
// The scenario is one JSON object: how many pods there are, the pod
// capacity, the targets (a name, or a name and a weight) and, optionally,
// where each target is now. The answer is one JSON object (or, with
// --format table, a table for people): the capacity used, every target's
// pod, each pod's load, the targets left unassigned, the targets that move
// and the fewest moves any placement could make. Input is read strictly, so
// that a typo is an error instead of a silently different plan; docs/planning.md
// describes the schema, the answers and the exit statuses.
package plan
