package workload

import (
	"net"
	"slices"
	"strconv"
	"strings"
)

// listeners are the output types whose collectors accept connections, each
// with the config key of its listening address and gNMIc's default address.
// Every other output type (file, kafka, nats, jetstream, influxdb,
// prometheus_write, tcp, udp, otlp) only dials out.
var listeners = map[string]struct{ key, defaultAddress string }{
	"prometheus": {key: "listen", defaultAddress: ":9804"},
	"gnmi":       {key: "address", defaultAddress: ":57400"},
}

// OutputPorts are the TCP ports the outputs, as rendered for the collectors,
// listen on: a prometheus output's listen address (":9804" when unset) and a
// gnmi output's address (":57400" when unset), sorted and each once. An
// address the collector could not listen on either (no port, a port out of
// range, a $VARIABLE the operator cannot resolve, a unix socket) opens
// nothing.
func OutputPorts(outputs map[string]map[string]any) []int32 {
	var ports []int32
	for _, o := range outputs {
		typ, _ := o["type"].(string)
		l, ok := listeners[typ]
		if !ok {
			continue
		}
		address := l.defaultAddress
		if v, set := o[l.key]; set {
			s, isString := v.(string)
			if !isString {
				continue
			}
			if s != "" {
				address = s
			}
		}
		if p, ok := tcpPort(address); ok {
			ports = append(ports, p)
		}
	}
	slices.Sort(ports)
	return slices.Compact(ports)
}

// tcpPort is the port of a host:port listening address.
func tcpPort(address string) (int32, bool) {
	if strings.Contains(address, "://") {
		return 0, false
	}
	_, port, err := net.SplitHostPort(address)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return 0, false
	}
	return int32(n), true
}
