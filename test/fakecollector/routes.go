package fakecollector

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"time"
)

// routes maps gNMIc's API paths, those of the release the collector answers
// as (release.go). gNMIc routes with gorilla/mux sub-routers, which answer a
// wrong method on an existing path with 404, not 405: hence only, instead of
// method patterns.
func (c *Collector) routes() http.Handler {
	if !c.release.collectAPI() {
		return c.record(c.appRoutes())
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/config", only(http.MethodGet, c.handleConfig))
	mux.HandleFunc("/api/v1/config/apply", only(http.MethodPost, c.handleApply))
	mux.HandleFunc("/api/v1/config/{kind}", only(http.MethodGet, c.handleConfigKind))
	mux.HandleFunc("/api/v1/config/{kind}/{name}", only(http.MethodGet, c.handleConfigObject))
	mux.HandleFunc("/api/v1/config/targets/{name}/state", only(http.MethodPost, c.handleConfigTargetState))
	mux.HandleFunc("/api/v1/targets", only(http.MethodGet, c.handleTargets))
	mux.HandleFunc("/api/v1/targets/{name}", only(http.MethodGet, c.handleTarget))
	mux.HandleFunc("/api/v1/targets/{name}/state/{state}", only(http.MethodPost, c.handleTargetState))
	if c.release.stateStreams() {
		mux.HandleFunc("/api/v1/sse/{kind}", only(http.MethodGet, c.handleEvents))
	}
	mux.HandleFunc("/api/v1/healthz", only(http.MethodGet, c.handleHealthz))
	mux.HandleFunc("/metrics", c.handleMetrics)
	mux.HandleFunc("/", http.NotFound)
	return c.record(mux)
}

func only(method string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method {
			http.NotFound(w, r)
			return
		}
		h(w, r)
	}
}

// Request is one request the collector received, as Requests returns it.
type Request struct {
	Time   time.Time
	Method string
	// Path is the escaped path as sent, such as /api/v1/targets/ns%2Fr1.
	Path   string
	Query  string
	Header http.Header
	// Body is the request body, decompressed when it was sent with
	// Content-Encoding: gzip (so a test can scan it for credentials).
	Body []byte
}

// record logs every request, then hands the handler the unchanged body.
func (c *Collector) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, err := io.ReadAll(r.Body)
		if err != nil {
			writeErrors(w, http.StatusBadRequest, "read body: "+err.Error())
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(raw))
		req := Request{
			Time:   time.Now(),
			Method: r.Method,
			Path:   r.URL.EscapedPath(),
			Query:  r.URL.RawQuery,
			Header: r.Header.Clone(),
			Body:   readableBody(raw, r.Header.Get("Content-Encoding")),
		}
		c.mu.Lock()
		c.accrue() // what flowed until now flowed under the configuration before this request
		c.requests = lastOf(append(c.requests, req), c.history)
		c.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func readableBody(raw []byte, encoding string) []byte {
	if encoding != "gzip" {
		return raw
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return raw
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		return raw
	}
	return plain
}

// writeJSON answers with a JSON body labelled text/plain, as gNMIc does (it
// never sets a Content-Type, so net/http sniffs one).
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// apiErrors is gNMIc's error body.
type apiErrors struct {
	Errors []string `json:"errors"`
}

func writeErrors(w http.ResponseWriter, status int, errs ...string) {
	writeJSON(w, status, apiErrors{Errors: errs})
}

// handleHealthz answers as gNMIc's handleHealthzGet, which writes json.Marshal's
// bytes: no trailing newline.
func (c *Collector) handleHealthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte(`{"status":"healthy"}`))
}
