package workload

import (
	"path"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/render"
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
	targetTLS := mount{path: "/var/run/gnmic/tls", readOnly: true, source: "secret/c-target-tls"}
	tests := []struct {
		name    string
		cluster *v1alpha1.Cluster
		opts    Options
		want    []mount
	}{
		{
			name:    "mounts the bootstrap config read-only, a writable /tmp and the Cluster's target TLS secret, required, without API TLS when the Cluster opts out",
			cluster: cluster(insecure), want: []mount{config, tmp, targetTLS},
		},
		{
			name:    "mounts the API TLS secret, required, by default",
			cluster: cluster(), want: []mount{config, tmp, apiTLS, targetTLS},
		},
		{
			name:    "mounts the API TLS secret when api.tls is set",
			cluster: cluster(withTLS), want: []mount{config, tmp, apiTLS, targetTLS},
		},
		{
			name: "mounts the API TLS secret the options name", cluster: cluster(withTLS), opts: Options{APITLSSecret: "issued"},
			want: []mount{config, tmp, {path: "/var/run/gnmic/api-tls", readOnly: true, source: "secret/issued"}, targetTLS},
		},
		{
			name: "mounts the gNMI server's TLS secret, required, when the server runs with TLS", cluster: cluster(withGNMIServer(0)),
			want: []mount{config, tmp, apiTLS, targetTLS, {path: "/var/run/gnmic/gnmi-tls", readOnly: true, source: "secret/c-gnmi-tls"}},
		},
		{
			name: "mounts no gNMI TLS secret for a gNMI server without TLS", cluster: cluster(insecure, withGNMIServer(0)),
			want: []mount{config, tmp, targetTLS},
		},
		{
			name: "mounts the target TLS secret of the Cluster by its name", cluster: cluster(insecure, func(c *v1alpha1.Cluster) { c.Name = "edge" }),
			want: []mount{{path: "/etc/gnmic", readOnly: true, source: "configmap/edge"}, tmp,
				{path: "/var/run/gnmic/tls", readOnly: true, source: "secret/edge-target-tls"}},
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

func TestTargetTLSIsMountedWholeWhereTheRendererPointsSoTheKubeletRefreshesIt(t *testing.T) {
	pod := StatefulSet(cluster(), Options{}).Spec.Template.Spec
	for _, m := range pod.Containers[0].VolumeMounts {
		if m.Name != targetTLSVolume {
			continue
		}
		if m.SubPath != "" || m.SubPathExpr != "" {
			t.Errorf("target TLS mounted with a subPath, which the kubelet never refreshes")
		}
		if file := render.TLSFilePath("leaf-ca", render.CAFile); path.Dir(file) != m.MountPath {
			t.Errorf("renderer points at %s, outside the mount %s", file, m.MountPath)
		}
		return
	}
	t.Fatalf("no target TLS mount")
}
