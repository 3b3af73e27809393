package render

import (
	"fmt"
	"maps"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/internal/selection"
)

// renderTarget returns the collector's view of a selected target. Its name
// on the collector is the Target's name: the targets of a Cluster all live in
// the Cluster's namespace, so names are unique.
//
// Subscriptions and outputs are the target's selection. An empty output list
// means "every output" to gNMIc, so a target whose pipelines select no output
// sends to every output of the Cluster (every pod has them all).
func renderTarget(st selection.SelectedTarget, conn Connections) (gnmic.TargetConfig, error) {
	t := st.Target
	if strings.Contains(t.Name, "/") {
		return gnmic.TargetConfig{}, ErrInvalidName
	}
	p := conn.Profiles[t.Spec.Profile]
	if p == nil {
		return gnmic.TargetConfig{}, fmt.Errorf("profile %q: %w", t.Spec.Profile, ErrProfileNotFound)
	}
	creds, err := credentialsOf(p, conn.Secrets)
	if err != nil {
		return gnmic.TargetConfig{}, fmt.Errorf("profile %q: %w", p.Name, err)
	}
	tc := gnmic.TargetConfig{
		Name:          t.Name,
		Address:       t.Spec.Address,
		Username:      creds.username,
		Password:      creds.password,
		Token:         creds.token,
		Timeout:       duration(p.Spec.Timeout),
		RetryTimer:    duration(p.Spec.RetryTimer),
		Encoding:      p.Spec.Encoding,
		Gzip:          p.Spec.Gzip,
		Proxy:         socksProxy(p.Spec.Proxy),
		TCPKeepalive:  duration(p.Spec.TCPKeepalive),
		GRPCKeepalive: grpcKeepalive(p.Spec.GRPCKeepalive),
		Subscriptions: st.Subscriptions,
		Outputs:       st.Outputs,
		EventTags:     eventTags(p.Spec.Tags, st.Labels, t.Spec.Tags),
	}
	if err := applyTLS(&tc, p, conn); err != nil {
		return gnmic.TargetConfig{}, fmt.Errorf("profile %q: %w", p.Name, err)
	}
	return tc, nil
}

// eventTags merges the tags attached to every update of a target, from the
// least to the most specific: the profile's tags, then the labels of the
// pipelines that select the target, then the target's own tags. A later
// layer wins a key over an earlier one, so a target can always override.
func eventTags(profile, pipelines, target map[string]string) map[string]string {
	tags := make(map[string]string, len(profile)+len(pipelines)+len(target))
	maps.Copy(tags, profile)
	maps.Copy(tags, pipelines)
	maps.Copy(tags, target)
	if len(tags) == 0 {
		return nil
	}
	return tags
}

// grpcKeepalive is a profile's grpcKeepalive as the collector reads it, or
// nil when it asks for nothing: gNMIc enables keepalive pings whenever the
// target has a grpc-keepalive, and gRPC then pings every 10s even without a
// time, so an empty one is not sent.
func grpcKeepalive(k *v1alpha1.GRPCKeepalive) *gnmic.GRPCKeepaliveConfig {
	if k == nil {
		return nil
	}
	out := gnmic.GRPCKeepaliveConfig{Time: duration(k.Time), Timeout: duration(k.Timeout), PermitWithoutStream: k.PermitWithoutStream}
	if out == (gnmic.GRPCKeepaliveConfig{}) {
		return nil
	}
	return &out
}

// socksProxy spells a profile's proxy as the collector reads it. The CRD
// takes host:port, but gNMIc uses a proxy only when it reads
// socks5://host:port and otherwise dials the device directly, silently. A
// value that already has a scheme is passed through.
func socksProxy(proxy string) string {
	if proxy == "" || strings.Contains(proxy, "://") {
		return proxy
	}
	return "socks5://" + proxy
}

// duration spells d as the collector reads it ("10s"). Unset and
// non-positive durations are left out: for target timers Normalize then
// sends the collector's defaults, for subscription intervals the collector
// asks the device for its own (gNMI's meaning of 0).
func duration(d *metav1.Duration) string {
	if d == nil || d.Duration <= 0 {
		return ""
	}
	return d.Duration.String()
}
