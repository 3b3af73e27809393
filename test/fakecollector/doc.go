// Package fakecollector is an in-memory gNMIc collector that serves the REST
// contract documented in /work/shared/gnmic-api.md, for envtest suites, the
// e2e harness, demos and the tests of internal/gnmic.
//
// The model: a Collector holds the configuration objects of the last accepted
// POST /api/v1/config/apply (targets, subscriptions, outputs, inputs,
// processors, tunnel-target-matches), decoded loosely from JSON the way gNMIc
// decodes them, so that malformed bodies, wrong types, unnamed objects, a
// subscription's history (which gNMIc cannot decode) and a target's
// grpc-keepalive are seen as the real collector sees them; processors are kept
// as sent, and Snapshot.InitError says how an output's or input's
// event-processors would fail its initialisation (processors.go). Every accepted
// apply is declarative: objects absent from the body are removed, deletes run
// before sets, and the fake records what the apply added, removed, changed
// and reconnected. The configuration shows at once in the config endpoints
// (GET /api/v1/config...) and the config event stream.
//
// Each target added, removed or changed by an apply raises one target change
// (an unchanged value raises none), which the runtime side acts on: it
// starts, stops, reconnects or updates a target in place, and keeps the
// configuration it acted on as the config the target runs. A running target
// moves starting -> running with connection READY and its subscriptions
// running (collecting), or to failed, where it stays until it is re-enabled,
// exactly like gNMIc. By default target changes are acted on within the
// apply. WithChangeQueue (or Realistic, the measured limits) models gNMIc's
// config watcher instead: the apply is answered once stored, its target
// changes wait in a bounded queue that one worker works off one at a time,
// and changes that overflow the queue are dropped silently, so a target can
// be configured and never run, or removed and still collecting. Subscription
// changes are always acted on within the apply. Runtime states are published
// as Server-Sent Events and as Prometheus gauges.
//
// The fake also emulates load (load.go): a target answers at the response rate
// a test gives it (SetResponseRate; ParetoRates makes a heavy-tailed mix)
// while it collects, counted per target and subscription in
// gnmic_targets_subscribe_response_received_count on /metrics as gNMIc counts
// it; a pod above its response capacity (WithResponseCapacity) drops the
// excess (gnmic_targets_dropped_subscribe_responses_count) and burns a full
// core (process_cpu_seconds_total). StaleSubscription shows a subscription
// stopped while its data keeps counting, as gNMIc sometimes does.
//
// The fake answers as the newest gNMIc release it was written from
// (NewestRelease) unless WithRelease names an older one; Release tells which.
// release.go holds each way an older release answers otherwise, read from
// gNMIc's source at its tag: v0.42.0 has no collect command and serves
// pkg/app's API (app_api.go: no /config/apply, no /sse, no target state
// routes, its targets a map); v0.43.0 has no /sse, answers GET
// /api/v1/targets with the state as a string, keeps no state of an output
// that fails to start, and refuses an apply with neither targets nor inputs
// (as v0.44.0 does); until v0.46.0 POST /api/v1/config/targets/{id}/state
// always answers 400 "target state is required", no tunnel-target-match ever
// matches, and clickhouse is an unknown output type; until v0.45.0 target
// passwords show in clear.
//
// Tests drive the fake through its HTTP API and steer it with injection
// methods (FailStart, DeviceDown, Blackhole, FailApply, FailOutputSetting,
// SetConnectionState), then inspect it (Targets, ConfiguredTargets,
// TargetStatus, Applied, Counts, Requests, Dropped, Pending, WaitIdle). It
// serves plain HTTP or TLS (WithTLS; NewPKI makes throwaway certificates) on
// any address, or in-process through Handler. ServeTunnel adds gNMIc's gRPC
// tunnel server (the real grpctunnel protocol; tunnel.go): devices that dial
// in (DialIn) and match a tunnel-target-match become targets named after their
// ID, which no apply removes. All methods are safe for concurrent use.
package fakecollector
