package render

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// ErrPortTaken: an output listens on a port something else of the Cluster listens on already. The collector
// would start it and fail to listen, silently; it is left out instead (PortTakenError says by what).
var ErrPortTaken = errors.New("port taken")

// PortTakenError is why an output that listens was left out: its port is taken by By, which is another output
// (Output is its name) or one of Connections.ReservedPorts (Output is empty).
type PortTakenError struct {
	Port int32
	// By says what listens on Port, in words: `output "a"`, or a reserved port's description.
	By string
	// Output is the name of the output that holds the port, empty for a reserved port.
	Output string
}

func (e PortTakenError) Error() string {
	return fmt.Sprintf("listens on port %d, which %s listens on already", e.Port, e.By)
}

func (e PortTakenError) Is(target error) bool { return target == ErrPortTaken }

// outputsByAge are the names of outputs, the oldest first (creation time, then name): an output created later
// never takes a port from one that holds it already.
func outputsByAge(outputs map[string]*v1alpha1.Output) []string {
	names := sortedKeys(outputs)
	slices.SortStableFunc(names, func(a, b string) int {
		ta, tb := outputs[a].CreationTimestamp, outputs[b].CreationTimestamp
		if ta.Equal(&tb) {
			return cmp.Compare(a, b)
		}
		if ta.Before(&tb) {
			return -1
		}
		return 1
	})
	return names
}
