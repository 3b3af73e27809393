// Package fakecollector is an in-memory gNMIc collector that serves the REST
// contract documented in /work/shared/gnmic-api.md, for envtest suites, the
// e2e harness, demos and the tests of internal/gnmic.
//
// The model: a Collector holds the configuration objects of the last accepted
// POST /api/v1/config/apply (targets, subscriptions, outputs, inputs,
// processors, tunnel-target-matches), decoded loosely from JSON the way gNMIc
// decodes them, so that malformed bodies, wrong types and unnamed objects are
// seen as the real collector sees them. Every accepted apply is declarative:
// objects absent from the body are removed, deletes run before sets, and the
// fake records what the apply added, removed, changed and reconnected. Each
// configured target has a runtime state that moves starting -> running with
// connection READY and its subscriptions running (collecting), or to failed,
// where it stays until it is re-enabled, exactly like gNMIc. State changes are
// published as Server-Sent Events and as Prometheus gauges.
//
// Tests drive the fake through its HTTP API and steer it with injection
// methods (FailStart, DeviceDown, FailApply, SetConnectionState), then inspect
// it (Targets, TargetStatus, Applied, Counts, Requests). It serves plain HTTP
// or TLS (WithTLS; NewPKI makes throwaway certificates) on any address, or
// in-process through Handler. All methods are safe for concurrent use.
package fakecollector
