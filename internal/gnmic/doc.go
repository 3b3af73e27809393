// Package gnmic talks to gNMIc collector pods: it models the configuration the
// operator pushes and wraps the collector's REST API.
//
// A collector pod is configured declaratively. Config is the whole body of
// POST /api/v1/config/apply: every target, subscription, output, input and
// processor the pod must run, keyed by name; anything absent is removed by the
// collector. The collector applies no defaults to pushed targets and only keeps
// an apply idempotent when each object's name equals its map key, so a Config
// is always sent in its Normalize form (names filled in, timeout and
// retry-timer defaulted, TLS intent explicit, set-like lists sorted).
// Fingerprint keys an HMAC of that form so a caller can push to a pod only
// when the pod's config changed and show the fingerprint without revealing
// anything (Hash, unkeyed, is for comparisons nobody else sees). Configs carry
// credentials: log them only through Redacted, String or MarshalLog, never as
// raw JSON.
//
// Client calls one pod: Apply pushes a Config, Targets and Target read the
// per-target runtime state (TargetState: started, failed, connected,
// collecting), EnableTarget restarts a target the collector gave up on, and
// WatchTargets follows the Server-Sent Events stream of state changes, which
// may drop events and is therefore a hint next to polling Targets. ResponseCounts
// reads the collector's per-target response counters from /metrics, the
// ground truth of what a target costs and of whether it collects.
package gnmic
