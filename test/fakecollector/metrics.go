package fakecollector

import (
	"fmt"
	"net/http"
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
	c.mu.Unlock()

	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	fmt.Fprintln(w, "# HELP gnmic_target_up Has value 1 if the gNMI target is configured; otherwise, 0.")
	fmt.Fprintln(w, "# TYPE gnmic_target_up gauge")
	fmt.Fprint(w, up.String())
	fmt.Fprintln(w, "# HELP gnmic_target_connection_state The current gRPC connection state to the target. "+
		"The value can be one of the following: 0(UNKNOWN), 1 (IDLE), 2 (CONNECTING), 3 (READY), 4 (TRANSIENT_FAILURE), or 5 (SHUTDOWN).")
	fmt.Fprintln(w, "# TYPE gnmic_target_connection_state gauge")
	fmt.Fprint(w, conn.String())
}

// quoteLabel escapes a label value for the text exposition format.
func quoteLabel(v string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(v) + `"`
}
