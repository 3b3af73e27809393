package workload

import (
	"maps"
	"testing"
)

func TestPodOrdinal(t *testing.T) {
	tests := []struct {
		name   string
		pod    string
		want   int
		wantOK bool
	}{
		{"parses the ordinal of a pod of the cluster", "c-12", 12, true},
		{"parses ordinal zero", "c-0", 0, true},
		{"rejects a non-numeric ordinal", "c-x", 0, false},
		{"rejects the pod of another cluster", "other-1", 0, false},
		{"rejects the pod of a cluster whose name extends this one", "c-1-0", 0, false},
		{"rejects the bare prefix", "c-", 0, false},
		{"rejects the cluster name alone", "c", 0, false},
		{"rejects a leading zero, which a StatefulSet never writes", "c-01", 0, false},
		{"rejects a sign", "c-+1", 0, false},
		{"rejects a negative ordinal", "c--1", 0, false},
		{"rejects non-ASCII digits", "c-١", 0, false},
		{"rejects an ordinal that overflows", "c-99999999999999999999999", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := PodOrdinal(cluster(), tt.pod)
			if got != tt.want || ok != tt.wantOK {
				t.Fatalf("PodOrdinal(%q) = %d, %v; want %d, %v", tt.pod, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestPodNameAndOrdinalRoundTrip(t *testing.T) {
	c := cluster()
	for _, ordinal := range []int{0, 1, 9, 10, 12, 1234} {
		name := PodName(c, ordinal)
		if got, ok := PodOrdinal(c, name); !ok || got != ordinal {
			t.Fatalf("PodOrdinal(PodName(%d) = %q) = %d, %v", ordinal, name, got, ok)
		}
	}
}

func TestNames(t *testing.T) {
	c := cluster()
	tests := []struct {
		name      string
		got, want any
	}{
		{"labels the objects with the cluster label", Labels(c), map[string]string{"operator.gnmic.dev/cluster": "c"}},
		{"selects the pods with the cluster label", Selector(c), "operator.gnmic.dev/cluster=c"},
		{"names pods like the StatefulSet does", PodName(c, 3), "c-3"},
		{"gives pods a DNS name through the headless service", PodHost(c, 3), "c-3.c.ns.svc"},
		{"defaults replicas to 1", Replicas(c), int32(1)},
		{"keeps zero replicas", Replicas(cluster(withReplicas(0))), int32(0)},
		{"defaults the REST port to 7890", RestPort(c), int32(7890)},
		{"takes the REST port from the spec", RestPort(cluster(withPort(9000))), int32(9000)},
		{"names the API TLS secret after the cluster", APITLSSecretName(c), "c-api-tls"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if m, ok := tt.got.(map[string]string); ok {
				if !maps.Equal(m, tt.want.(map[string]string)) {
					t.Fatalf("got %v, want %v", tt.got, tt.want)
				}
				return
			}
			if tt.got != tt.want {
				t.Fatalf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
}
