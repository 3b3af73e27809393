// Package monitoring checks what config/prometheus and config/grafana ask of the operator's metrics: every
// series and label an alert or a dashboard query reads must be one the operator registers on the registry
// its /metrics endpoint serves. It is its own module so that Prometheus's query parser stays out of the
// operator's dependencies. `make test-alerts` runs it, and promtool's unit tests of the alerts.
package monitoring
