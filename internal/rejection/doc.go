// Package rejection decides what follows when collectors refuse the configuration they are sent.
//
// Two cases are told apart by the reconciler before it asks this package anything. A pod's own refusal
// (other collectors of the Cluster accept the same outputs and inputs, or only that pod cannot be pushed)
// says something about the pod: Track remembers since when each pod has refused, and Exclude takes a pod
// that has refused for longer than the Cluster's grace period out of placement, so that its targets are
// handed to pods that take their configuration; it counts again as soon as it accepts. A shared rejection
// (every collector refuses the part every pod receives alike) says something about the configuration:
// nothing moves, and Blame names the Outputs and Inputs the rejection is blamed on, so that the user sees
// on the object at fault what the collectors said.
//
// Everything here is a pure function over plain values.
package rejection
