package fakecollector

import (
	"fmt"
	"strconv"
	"strings"
)

// The gNMIc release the fake answers as (WithRelease). Each rule below says, from gNMIc's source at the tags
// (github.com/openconfig/gnmic), where an older release answers otherwise than the newest; everything not
// listed here answers alike in every release from v0.43.0 on. The fake keeps its own small release type
// rather than the operator's (internal/gnmic): it must answer as gNMIc does even where the operator's table
// is wrong.

// NewestRelease is the release the fake answers as unless told otherwise: the newest gNMIc release whose
// answers it was written from. A newer release answers as this one.
const NewestRelease = "0.47.0"

type release struct{ major, minor, patch int }

func parseRelease(s string) (release, error) {
	parts := strings.Split(strings.TrimPrefix(s, "v"), ".")
	if len(parts) != 3 {
		return release{}, fmt.Errorf("gNMIc release %q: want MAJOR.MINOR.PATCH", s)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return release{}, fmt.Errorf("gNMIc release %q: want MAJOR.MINOR.PATCH", s)
		}
		n[i] = v
	}
	return release{n[0], n[1], n[2]}, nil
}

func mustParseRelease(s string) release {
	r, err := parseRelease(s)
	if err != nil {
		panic("fakecollector: " + err.Error())
	}
	return r
}

func (r release) String() string { return fmt.Sprintf("%d.%d.%d", r.major, r.minor, r.patch) }

// atLeast tells whether r is o or newer.
func (r release) atLeast(o release) bool {
	if r.major != o.major {
		return r.major > o.major
	}
	if r.minor != o.minor {
		return r.minor > o.minor
	}
	return r.patch >= o.patch
}

// WithRelease makes the collector answer as gNMIc release (such as "0.43.0" or "v0.46.0") does, for what the
// operator uses; it panics on a string that is no release, a mistake in the test. By default the collector
// answers as NewestRelease.
func WithRelease(release string) Option {
	r := mustParseRelease(release)
	return func(c *Collector) { c.release = r }
}

// Release is the gNMIc release the collector answers as, such as "0.47.0".
func (c *Collector) Release() string { return c.release.String() }

var (
	release043 = mustParseRelease("0.43.0")
	release044 = mustParseRelease("0.44.0")
	// release0441 is v0.44.1, the first with gNMIc commit be8f5300 ("allow apply request without targets").
	release0441 = mustParseRelease("0.44.1")
	release046  = mustParseRelease("0.46.0")
	release047  = mustParseRelease("0.47.0")
)

// collectAPI: v0.43.0 added the collect command (pkg/cmd/root.go) and its API server
// (pkg/collector/api/server/routes.go). Before it a pod's gNMIc serves the API of pkg/app (v0.42.0
// pkg/app/routes.go), which has no /config/apply, no /sse and no target state routes (app_api.go).
func (r release) collectAPI() bool { return r.atLeast(release043) }

// stateStreams: GET /api/v1/sse/{kind} is routed from v0.44.0 on (pkg/collector/api/server/routes.go,
// sseRoutes); v0.43.0 answers it with gorilla/mux's 404.
func (r release) stateStreams() bool { return r.atLeast(release044) }

// stateFromBody: v0.47.0 routes POST /api/v1/config/targets/{id}/state to handleConfigTargetsStatePost, which
// reads {"state": ...} from the body (pkg/collector/api/server/targets.go). v0.43.0 to v0.46.0 route it to
// handleTargetsStatePost, which reads the state from a {state} path variable that route does not have: after
// checking the id, every call answers 400 "target state is required", whatever the body and the target.
func (r release) stateFromBody() bool { return r.atLeast(release047) }

// tunnelMatches: before v0.47.0 getTunnelTargetMatch's store.List filter returned false on every path
// (pkg/collector/managers/targets/tunnel_server.go at v0.43.0 to v0.46.0, fixed by gNMIc commit 8bca0432):
// no tunnel-target-match ever matches. addTargetHandler logs "target ignored, not matching any rule" and
// returns nil, so the device's registration succeeds and it stays registered, and no target is made.
func (r release) tunnelMatches() bool { return r.atLeast(release047) }

// applyNeedsTargetsOrInputs: validateApplyRequest (pkg/collector/api/server/apply.go) of v0.43.0 and v0.44.0
// refuses an apply that is not empty but has neither targets nor inputs ("at least one of targets or inputs
// is required"), and its empty-request check ignores tunnel-target-matches; neither has the rule
// "if tunnel-target-matches are provided, at least one subscription is required". v0.44.1 dropped the first
// and added the second.
func (r release) applyNeedsTargetsOrInputs() bool { return !r.atLeast(release0441) }

// targetStateObject: v0.44.0 made the state of GET /api/v1/targets the state store's object (TargetResponse
// in pkg/collector/api/server/targets.go). v0.43.0 answers {"name", "config", "subscriptions": {name:
// {"name", "state"}}, "state": "<state>"} with the state a string (target_api.go, viewV043).
func (r release) targetStateObject() bool { return r.atLeast(release044) }

// redactsTargets: v0.46.0 masks target passwords and tokens as "****" on GET /api/v1/targets and GET
// /api/v1/config/targets (TargetConfig.RedactedDeepCopy, unless the api-server exposes secrets). v0.43.0 to
// v0.45.0 show them in clear.
func (r release) redactsTargets() bool { return r.atLeast(release046) }

// failedComponentStates: from v0.44.0 an output or input that cannot start is kept with state failed and
// the reason (setOutputState, pkg/collector/managers/outputs/outputs_manager.go). v0.43.0's createOutput only
// logs the error and tracks nothing: the component has no state at all.
func (r release) failedComponentStates() bool { return r.atLeast(release044) }

// registered are the output and input types of each release, first and last release (zero: still there),
// read from pkg/outputs/all/all.go and pkg/inputs/all/all.go at every tag: otlp arrived in v0.43.0,
// clickhouse in v0.47.0; stan (output and input) was last in v0.42.0 (v0.42.1 dropped it).
var registered = map[string]map[string][2]release{
	kindOutputs: {
		"asciigraph": {}, "file": {}, "gnmi": {}, "influxdb": {}, "kafka": {}, "jetstream": {}, "nats": {},
		"prometheus": {}, "prometheus_write": {}, "snmp": {}, "tcp": {}, "udp": {},
		"stan":       {{}, mustParseRelease("0.42.0")},
		"otlp":       {release043, {}},
		"clickhouse": {release047, {}},
	},
	kindInputs: {
		"jetstream": {}, "kafka": {}, "nats": {},
		"stan": {{}, mustParseRelease("0.42.0")},
	},
}

// registers tells whether the release has the output or input type typ.
func (r release) registers(kind, typ string) bool {
	span, ok := registered[kind][typ]
	if !ok {
		return false
	}
	return r.atLeast(span[0]) && (span[1] == release{} || span[1].atLeast(r))
}
