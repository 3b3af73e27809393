package workload

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// mount is a volume with where it is mounted, for comparisons.
type mount struct {
	path     string
	readOnly bool
	source   string // configmap/<name>, secret/<name>, emptyDir
	optional bool
}

func mounts(t *testing.T, c *v1alpha1.Cluster, opts Options) []mount {
	t.Helper()
	pod := StatefulSet(c, opts).Spec.Template.Spec
	byName := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		if _, dup := byName[v.Name]; dup {
			t.Fatalf("volume %q twice", v.Name)
		}
		byName[v.Name] = v
	}
	var out []mount
	for _, m := range pod.Containers[0].VolumeMounts {
		v, ok := byName[m.Name]
		if !ok {
			t.Fatalf("mount of unknown volume %q", m.Name)
		}
		delete(byName, m.Name)
		mt := mount{path: m.MountPath, readOnly: m.ReadOnly}
		switch {
		case v.ConfigMap != nil:
			mt.source = "configmap/" + v.ConfigMap.Name
		case v.Secret != nil:
			mt.source, mt.optional = "secret/"+v.Secret.SecretName, *v.Secret.Optional
		case v.EmptyDir != nil:
			mt.source = "emptyDir"
		}
		out = append(out, mt)
	}
	if len(byName) > 0 {
		t.Fatalf("volumes not mounted: %v", byName)
	}
	return out
}

func TestVolumes(t *testing.T) {
	config := mount{path: "/etc/gnmic", readOnly: true, source: "configmap/c"}
	tmp := mount{path: "/tmp", source: "emptyDir"}
	apiTLS := mount{path: "/var/run/gnmic/api-tls", readOnly: true, source: "secret/c-api-tls"}
	tests := []struct {
		name    string
		cluster *v1alpha1.Cluster
		opts    Options
		want    []mount
	}{
		{"mounts the bootstrap config read-only and a writable /tmp", cluster(), Options{}, []mount{config, tmp}},
		{"mounts the API TLS secret, required, when api.tls is set", cluster(withTLS), Options{}, []mount{config, tmp, apiTLS}},
		{
			name: "mounts the API TLS secret the options name", cluster: cluster(withTLS), opts: Options{APITLSSecret: "issued"},
			want: []mount{config, tmp, {path: "/var/run/gnmic/api-tls", readOnly: true, source: "secret/issued"}},
		},
		{
			name:    "mounts each target TLS secret once, optional, where the renderer points, in name order",
			cluster: cluster(), opts: Options{TargetTLSSecrets: []string{"spine.ca", "leaf-ca", "spine.ca", ""}},
			want: []mount{config, tmp,
				{path: "/var/run/gnmic/tls/leaf-ca", readOnly: true, source: "secret/leaf-ca", optional: true},
				{path: "/var/run/gnmic/tls/spine.ca", readOnly: true, source: "secret/spine.ca", optional: true},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mounts(t, tt.cluster, tt.opts); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("mounts:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestTargetTLSVolumeNamesAreValidAndDistinct(t *testing.T) {
	long := "a.very-long-secret-name-that-is-far-beyond-the-sixty-three-characters-of-a-dns-label"
	seen := map[string]string{}
	for _, secret := range []string{"leaf-ca", "spine.ca", long, "x"} {
		name := targetTLSVolume(secret)
		if len(name) > 63 {
			t.Errorf("volume name %q of secret %q is longer than a DNS label", name, secret)
		}
		if other, dup := seen[name]; dup {
			t.Errorf("secrets %q and %q share volume name %q", other, secret, name)
		}
		seen[name] = secret
	}
}
