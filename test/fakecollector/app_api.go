package fakecollector

import (
	"net/http"
)

// appRoutes is the REST API of gNMIc before the collect command (v0.42.0 pkg/app/routes.go and api.go): the
// API server of gnmic subscribe. Of it the fake serves what the operator may call of any collector, health,
// the targets and the configuration, and answers every other path with gorilla/mux's 404, as v0.42.0 does
// for everything newer (/config/apply, /sse, the target state routes). pkg/app routes the operator never
// calls (POST /config/targets, the cluster routes, ...) are left out and answer 404 too. Nothing can
// configure such a collector, so it never holds a target.
func (c *Collector) appRoutes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/healthz", only(http.MethodGet, appJSON(http.StatusOK, `{"status":"healthy"}`)))
	// handleTargetsGet marshals a.Targets, a map by name that starts empty: an object, not a list.
	mux.HandleFunc("/api/v1/targets", only(http.MethodGet, appJSON(http.StatusOK, `{}`)))
	mux.HandleFunc("/api/v1/targets/{name}", only(http.MethodGet,
		appJSON(http.StatusNotFound, `{"errors":["no targets found"]}`+"\n")))
	// handleConfig marshals config.Config: with nothing configured only GlobalFlags.CfgFile, the one field
	// without omitempty, is left. The flags a real process was started with are not emulated.
	mux.HandleFunc("/api/v1/config", only(http.MethodGet, appJSON(http.StatusOK, `{"CfgFile":""}`)))
	mux.HandleFunc("/metrics", c.handleMetrics)
	mux.HandleFunc("/", http.NotFound)
	return mux
}

// appJSON answers body as pkg/app does: its headersMiddleware labels every routed answer application/json,
// and json.Marshal writes no trailing newline where the handler used it (json.NewEncoder does).
func appJSON(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}
}
