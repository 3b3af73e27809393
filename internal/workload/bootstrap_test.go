package workload

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

func TestBootstrapConfig(t *testing.T) {
	tests := []struct {
		name    string
		cluster *v1alpha1.Cluster
		want    map[string]any
	}{
		{
			name:    "serves plain HTTP on the default port with metrics and logs when the Cluster opts out of TLS",
			cluster: cluster(insecure),
			want: map[string]any{
				"api-server": map[string]any{"address": ":7890", "enable-metrics": true},
				"log":        true,
			},
		},
		{
			name:    "serves the REST API on the spec's port",
			cluster: cluster(insecure, withPort(9443)),
			want: map[string]any{
				"api-server": map[string]any{"address": ":9443", "enable-metrics": true},
				"log":        true,
			},
		},
		{
			name:    "serves TLS and requires verified client certificates by default",
			cluster: cluster(),
			want: map[string]any{
				"api-server": map[string]any{
					"address":        ":7890",
					"enable-metrics": true,
					"tls": map[string]any{
						"ca-file":     "/var/run/gnmic/api-tls/ca.crt",
						"cert-file":   "/var/run/gnmic/api-tls/tls.crt",
						"key-file":    "/var/run/gnmic/api-tls/tls.key",
						"client-auth": "require-verify",
					},
				},
				"log": true,
			},
		},
		{
			name:    "runs the gNMI server over TLS with verified client certificates when it is enabled",
			cluster: cluster(withGNMIServer(0)),
			want: map[string]any{
				"api-server": map[string]any{
					"address":        ":7890",
					"enable-metrics": true,
					"tls": map[string]any{
						"ca-file":     "/var/run/gnmic/api-tls/ca.crt",
						"cert-file":   "/var/run/gnmic/api-tls/tls.crt",
						"key-file":    "/var/run/gnmic/api-tls/tls.key",
						"client-auth": "require-verify",
					},
				},
				"gnmi-server": map[string]any{
					"address": ":57400",
					"tls": map[string]any{
						"ca-file":     "/var/run/gnmic/gnmi-tls/ca.crt",
						"cert-file":   "/var/run/gnmic/gnmi-tls/tls.crt",
						"key-file":    "/var/run/gnmic/gnmi-tls/tls.key",
						"client-auth": "require-verify",
					},
				},
				"log": true,
			},
		},
		{
			name:    "runs the gNMI server in plain gRPC on the spec's port when the Cluster opts out of TLS",
			cluster: cluster(insecure, withGNMIServer(50051)),
			want: map[string]any{
				"api-server":  map[string]any{"address": ":7890", "enable-metrics": true},
				"gnmi-server": map[string]any{"address": ":50051"},
				"log":         true,
			},
		},
		{
			name: "runs no gNMI server unless it is enabled", cluster: cluster(insecure, func(c *v1alpha1.Cluster) {
				c.Spec.API.GNMI = &v1alpha1.GNMIServerSpec{Port: 57400}
			}),
			want: map[string]any{"api-server": map[string]any{"address": ":7890", "enable-metrics": true}, "log": true},
		},
		{
			name:    "serves TLS and requires verified client certificates when api.tls is set",
			cluster: cluster(withTLS),
			want: map[string]any{
				"api-server": map[string]any{
					"address":        ":7890",
					"enable-metrics": true,
					"tls": map[string]any{
						"ca-file":     "/var/run/gnmic/api-tls/ca.crt",
						"cert-file":   "/var/run/gnmic/api-tls/tls.crt",
						"key-file":    "/var/run/gnmic/api-tls/tls.key",
						"client-auth": "require-verify",
					},
				},
				"log": true,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got map[string]any
			if err := yaml.Unmarshal([]byte(BootstrapConfig(tt.cluster)), &got); err != nil {
				t.Fatalf("the bootstrap config is not YAML: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("bootstrap config:\n got %v\nwant %v", got, tt.want)
			}
		})
	}
}

func TestConfigChecksumFollowsTheBootstrapConfigOnly(t *testing.T) {
	base := ConfigChecksum(cluster())
	tests := []struct {
		name        string
		cluster     *v1alpha1.Cluster
		wantChanged bool
	}{
		{"changes when the REST port changes", cluster(withPort(7891)), true},
		{"changes when the Cluster opts out of API TLS", cluster(insecure), true},
		{"stays when api.tls: {} spells out the default", cluster(withTLS), false},
		{"stays when the port is set to its default", cluster(withPort(7890)), false},
		{"stays when replicas change", cluster(withReplicas(5)), false},
		{"stays when the image changes", cluster(func(c *v1alpha1.Cluster) { c.Spec.Image = "gnmic:next" }), false},
		{"stays when pod labels and env change", cluster(func(c *v1alpha1.Cluster) {
			c.Spec.PodLabels = map[string]string{"team": "net"}
			c.Spec.Env = []corev1.EnvVar{{Name: "A", Value: "1"}}
		}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if changed := ConfigChecksum(tt.cluster) != base; changed != tt.wantChanged {
				t.Fatalf("checksum changed = %v, want %v", changed, tt.wantChanged)
			}
		})
	}
}

func TestBootstrapConfigMap(t *testing.T) {
	c := cluster(withTLS)
	cm := BootstrapConfigMap(c)
	if cm.Name != "c" || cm.Namespace != "ns" || cm.Labels["operator.gnmic.dev/cluster"] != "c" {
		t.Errorf("ConfigMap metadata = %+v, want c in ns with the cluster label", cm.ObjectMeta)
	}
	if cm.APIVersion != "v1" || cm.Kind != "ConfigMap" {
		t.Errorf("ConfigMap type = %v", cm.TypeMeta)
	}
	if len(cm.Data) != 1 || cm.Data["gnmic.yaml"] != BootstrapConfig(c) {
		t.Errorf("ConfigMap data = %v, want only gnmic.yaml with the bootstrap config", cm.Data)
	}
	if len(cm.OwnerReferences) != 0 {
		t.Errorf("owner references are the reconciler's job: %v", cm.OwnerReferences)
	}
}
