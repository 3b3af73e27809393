// Package availability decides which collector pods can hold targets right now.
//
// A pod with an ordinal below the desired replica count is available while it exists and is ready. When it
// stops being ready (or disappears, as during a rolling restart, until the StatefulSet recreates it) it
// enters a grace period: it keeps the targets it holds, receives no new ones, and its targets are not
// counted as moved. When the grace period ends its targets are orphaned and placed elsewhere. A pod whose
// ordinal is at or above the replica count is being scaled away: it has no grace, its targets move at once.
package availability
