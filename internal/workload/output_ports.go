package workload

import (
	"slices"

	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
)

// OutputPorts are the TCP ports the outputs, as rendered for the collectors,
// listen on (gnmic.OutputListenPort): a prometheus output's listen address
// (":9804" when unset) and a gnmi output's address (":57400" when unset),
// sorted and each once. An address the collector could not listen on either
// (no port, a port out of range, a $VARIABLE the operator cannot resolve, a
// unix socket) opens nothing.
func OutputPorts(outputs map[string]map[string]any) []int32 {
	var ports []int32
	for _, o := range outputs {
		if p, ok := gnmic.OutputListenPort(o); ok {
			ports = append(ports, p)
		}
	}
	slices.Sort(ports)
	return slices.Compact(ports)
}
