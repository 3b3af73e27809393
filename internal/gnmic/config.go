package gnmic

import (
	"maps"
	"slices"
)

// Config is the body of POST /api/v1/config/apply: the complete desired
// configuration of one collector pod. Maps are keyed by object name. Empty maps
// are omitted, so the empty Config encodes as {} and resets a collector.
type Config struct {
	Targets       map[string]TargetConfig       `json:"targets,omitempty"`
	Subscriptions map[string]SubscriptionConfig `json:"subscriptions,omitempty"`
	Outputs       map[string]map[string]any     `json:"outputs,omitempty"`
	Inputs        map[string]map[string]any     `json:"inputs,omitempty"`
	Processors    map[string]map[string]any     `json:"processors,omitempty"`
	// TunnelTargetMatches are the rules by which the collector's tunnel server turns a registering device
	// into a target (tunnel.go).
	TunnelTargetMatches map[string]TunnelTargetMatch `json:"tunnel-target-matches,omitempty"`
}

// TargetNames are the names of the configuration's targets, sorted.
func (c Config) TargetNames() []string {
	return slices.Sorted(maps.Keys(c.Targets))
}

// TargetConfig is one gNMI device as the collector's apply body spells it.
// Durations are strings such as "10s": the collector reads a bare number as
// nanoseconds. Insecure and SkipVerify are always sent because the collector
// applies no defaults to pushed targets.
type TargetConfig struct {
	Name          string            `json:"name"`
	Address       string            `json:"address,omitempty"`
	Username      string            `json:"username,omitempty"`
	Password      string            `json:"password,omitempty"`
	Token         string            `json:"token,omitempty"`
	AuthScheme    string            `json:"auth-scheme,omitempty"`
	Timeout       string            `json:"timeout,omitempty"`
	RetryTimer    string            `json:"retry-timer,omitempty"`
	Insecure      bool              `json:"insecure"`
	SkipVerify    bool              `json:"skip-verify"`
	TLSCA         string            `json:"tls-ca,omitempty"`
	TLSCert       string            `json:"tls-cert,omitempty"`
	TLSKey        string            `json:"tls-key,omitempty"`
	TLSServerName string            `json:"tls-server-name,omitempty"`
	TLSMinVersion string            `json:"tls-min-version,omitempty"`
	TLSMaxVersion string            `json:"tls-max-version,omitempty"`
	CipherSuites  []string          `json:"cipher-suites,omitempty"`
	Encoding      string            `json:"encoding,omitempty"`
	Gzip          bool              `json:"gzip,omitempty"`
	Proxy         string            `json:"proxy,omitempty"`
	Subscriptions []string          `json:"subscriptions,omitempty"`
	Outputs       []string          `json:"outputs,omitempty"`
	Tags          []string          `json:"tags,omitempty"`
	EventTags     map[string]string `json:"event-tags,omitempty"`
	Metadata      map[string]string `json:"metadata,omitempty"`
	BufferSize    uint              `json:"buffer-size,omitempty"`
	TCPKeepalive  string            `json:"tcp-keepalive,omitempty"`
	// GRPCKeepalive is nil unless a profile asks for gRPC keepalive pings.
	GRPCKeepalive *GRPCKeepaliveConfig `json:"grpc-keepalive,omitempty"`
}

// GRPCKeepaliveConfig is a target's grpc-keepalive: gRPC's client keepalive
// parameters. The keys are the mapstructure tags of gNMIc's clientKeepalive
// type (github.com/openconfig/gnmic, pkg/api/types/target.go): time, timeout
// and permit-without-stream. The collector decodes the durations from strings
// such as "10s". gRPC raises a time below 10s, an unset one included, to 10s.
type GRPCKeepaliveConfig struct {
	Time                string `json:"time,omitempty"`
	Timeout             string `json:"timeout,omitempty"`
	PermitWithoutStream bool   `json:"permit-without-stream,omitempty"`
}

// SubscriptionConfig is one gNMI subscription as the apply body spells it.
// A target with an empty Subscriptions list runs every subscription.
//
// There is deliberately no history: gNMIc's history times are Go time.Time
// values that its apply decoder cannot decode from any JSON value, and one
// subscription with history makes the collector refuse the whole apply (400).
type SubscriptionConfig struct {
	Name                string               `json:"name"`
	Models              []string             `json:"models,omitempty"`
	Prefix              string               `json:"prefix,omitempty"`
	Target              string               `json:"target,omitempty"`
	Paths               []string             `json:"paths,omitempty"`
	Mode                string               `json:"mode,omitempty"`
	StreamMode          string               `json:"stream-mode,omitempty"`
	Encoding            string               `json:"encoding,omitempty"`
	Qos                 *uint32              `json:"qos,omitempty"`
	SampleInterval      string               `json:"sample-interval,omitempty"`
	HeartbeatInterval   string               `json:"heartbeat-interval,omitempty"`
	SuppressRedundant   bool                 `json:"suppress-redundant,omitempty"`
	UpdatesOnly         bool                 `json:"updates-only,omitempty"`
	StreamSubscriptions []SubscriptionConfig `json:"stream-subscriptions,omitempty"`
	Outputs             []string             `json:"outputs,omitempty"`
	Depth               uint32               `json:"depth,omitempty"`
}

// Subscription modes and stream modes understood by the collector.
const (
	ModeOnce   = "once"
	ModePoll   = "poll"
	ModeStream = "stream"

	StreamModeSample        = "sample"
	StreamModeOnChange      = "on-change"
	StreamModeTargetDefined = "target-defined"
)
