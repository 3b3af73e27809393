package fakecollector

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// connectionStateValues are the values of gnmic_target_connection_state.
var connectionStateValues = map[string]int{
	"IDLE": 1, ConnectionConnecting: 2, ConnectionReady: 3, ConnectionTransientFailure: 4, "SHUTDOWN": 5,
}

// handleMetrics serves GET /metrics in the Prometheus text format. A target
// that was ever configured keeps its series: gnmic_target_up is 1 while it
// is configured and 0 after deletion, like its connection state. Values are
// current; gNMIc refreshes them every 10 s.
func (c *Collector) handleMetrics(w http.ResponseWriter, _ *http.Request) {
	c.mu.Lock()
	var up, conn strings.Builder
	for _, name := range sortedKeys(c.metricNames) {
		upValue, connValue := 0, 0
		if t, ok := c.targets[name]; ok {
			upValue = 1
			connValue = connectionStateValues[t.status.ConnectionState]
		}
		fmt.Fprintf(&up, "gnmic_target_up{name=%s} %d\n", quoteLabel(name), upValue)
		fmt.Fprintf(&conn, "gnmic_target_connection_state{name=%s} %d\n", quoteLabel(name), connValue)
	}
	c.accrue()
	received := counterLines("gnmic_targets_subscribe_response_received_count", c.load.received)
	dropped := counterLines("gnmic_targets_dropped_subscribe_responses_count", c.load.dropped)
	cpu := c.load.cpuSeconds
	c.mu.Unlock()

	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	fmt.Fprintln(w, "# HELP gnmic_target_up Has value 1 if the gNMI target is configured; otherwise, 0.")
	fmt.Fprintln(w, "# TYPE gnmic_target_up gauge")
	fmt.Fprint(w, up.String())
	fmt.Fprintln(w, "# HELP gnmic_target_connection_state The current gRPC connection state to the target. "+
		"The value can be one of the following: 0(UNKNOWN), 1 (IDLE), 2 (CONNECTING), 3 (READY), 4 (TRANSIENT_FAILURE), or 5 (SHUTDOWN).")
	fmt.Fprintln(w, "# TYPE gnmic_target_connection_state gauge")
	fmt.Fprint(w, conn.String())
	if received != "" {
		fmt.Fprintln(w, "# HELP gnmic_targets_subscribe_response_received_count Number of subscribe responses received")
		fmt.Fprintln(w, "# TYPE gnmic_targets_subscribe_response_received_count counter")
		fmt.Fprint(w, received)
	}
	if dropped != "" {
		fmt.Fprintln(w, "# HELP gnmic_targets_dropped_subscribe_responses_count Number of dropped subscribe responses")
		fmt.Fprintln(w, "# TYPE gnmic_targets_dropped_subscribe_responses_count counter")
		fmt.Fprint(w, dropped)
	}
	fmt.Fprintln(w, "# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.")
	fmt.Fprintln(w, "# TYPE process_cpu_seconds_total counter")
	fmt.Fprintln(w, "process_cpu_seconds_total "+strconv.FormatFloat(cpu, 'g', -1, 64))
}

// counterLines writes a per-target, per-subscription counter as gNMIc's Prometheus client does: labels in name
// order, whole responses (a series exists from its first response on), values formatted like
// client_golang's (1.234567e+06 above a million).
func counterLines(name string, values map[seriesKey]float64) string {
	var b strings.Builder
	for _, k := range sortedSeries(values) {
		n := math.Floor(values[k])
		if n < 1 {
			continue
		}
		fmt.Fprintf(&b, "%s{subscription=%s,target=%s} %s\n", name, quoteLabel(k.subscription), quoteLabel(k.target),
			strconv.FormatFloat(n, 'g', -1, 64))
	}
	return b.String()
}

// quoteLabel escapes a label value for the text exposition format.
func quoteLabel(v string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(v) + `"`
}
