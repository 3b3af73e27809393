package gnmic

import (
	"net"
	"strconv"
	"strings"
)

// listeners are the output types whose collectors accept connections, each with the config key of its
// listening address and gNMIc's default address. Every other output type (file, kafka, nats, jetstream,
// influxdb, prometheus_write, tcp, udp, otlp, snmp traps, clickhouse) only dials out.
var listeners = map[string]struct{ key, defaultAddress string }{
	"prometheus": {key: "listen", defaultAddress: ":9804"},
	"gnmi":       {key: "address", defaultAddress: ":57400"},
}

// OutputListenPort is the TCP port an output, as pushed to a collector, listens on: a prometheus output's
// listen address (":9804" when unset or empty) and a gnmi output's address (":57400" when unset or empty).
// ok is false for outputs that only dial out, and for an address the collector could not listen on either
// (no port, a port out of range, a $VARIABLE the operator cannot resolve, a unix socket, a value that is not
// a string): such an output opens nothing.
func OutputListenPort(output map[string]any) (port int32, ok bool) {
	typ, _ := output["type"].(string)
	l, ok := listeners[typ]
	if !ok {
		return 0, false
	}
	address := l.defaultAddress
	if v, set := output[l.key]; set {
		s, isString := v.(string)
		if !isString {
			return 0, false
		}
		if s != "" {
			address = s
		}
	}
	return tcpPort(address)
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
