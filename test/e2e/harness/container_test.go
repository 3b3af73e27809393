package harness

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestExpandReferencesLikeKubernetes(t *testing.T) {
	vars := map[string]string{"WATCH_NAMESPACE": "", "POD": "op-0"}
	lookup := func(name string) (string, bool) { v, ok := vars[name]; return v, ok }
	for in, want := range map[string]string{
		"--watch-namespace=$(WATCH_NAMESPACE)": "--watch-namespace=",
		"$(POD)-$(POD)":                        "op-0-op-0",
		"$(UNKNOWN)":                           "$(UNKNOWN)",
		"$$(POD)":                              "$(POD)",
		"cost: $5":                             "cost: $5",
		"$(unterminated":                       "$(unterminated",
	} {
		if got := expandReferences(in, lookup); got != want {
			t.Errorf("expandReferences(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestListenAddressesArePinnedToThePodIP(t *testing.T) {
	img := OperatorImage("/bin/true")
	got := img.pinListenAddresses([]string{
		"--leader-elect", "--health-probe-bind-address=:8081", "--metrics-bind-address", "0.0.0.0:8443", "--watch-namespace=",
	}, "127.1.0.7")
	want := []string{
		"--leader-elect", "--health-probe-bind-address=127.1.0.7:8081", "--metrics-bind-address", "127.1.0.7:8443",
		"--watch-namespace=", "--metrics-api-bind-address=127.1.0.7", "--targetsource-push-bind-address=127.1.0.7:9443",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	off := img.pinListenAddresses([]string{"--metrics-bind-address=0", "--health-probe-bind-address=10.0.0.1:9000"}, "127.1.0.7")
	if off[0] != "--metrics-bind-address=0" || off[1] != "--health-probe-bind-address=10.0.0.1:9000" {
		t.Errorf("a switched-off or specific address must stay: %q", off)
	}
	pprof := img.pinListenAddresses([]string{"--pprof-bind-address=:6065"}, "127.1.0.7")
	if pprof[0] != "--pprof-bind-address=127.1.0.7:6065" {
		t.Errorf("an address given for a flag that is off by default is pinned too: %q", pprof)
	}
}

func TestRestartBackoffFollowsTheKubelet(t *testing.T) {
	var b restartBackoff
	var got []time.Duration
	for range 7 {
		got = append(got, b.after(time.Second))
	}
	want := []time.Duration{0, 10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 300 * time.Second}
	if !slices.Equal(got, want) {
		t.Errorf("crash loop delays %v, want %v", got, want)
	}
	if d := b.after(11 * time.Minute); d != 0 {
		t.Errorf("a container that ran 10 minutes restarts at once, got %s", d)
	}
}

func TestPodFieldsResolveLikeTheDownwardAPI(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "op-0", Namespace: "ops", Annotations: map[string]string{"olm.targetNamespaces": "a,b"}},
		Spec:       corev1.PodSpec{NodeName: "node-1", ServiceAccountName: "sa"},
		Status:     corev1.PodStatus{PodIP: "127.1.0.7"},
	}
	for path, want := range map[string]string{
		"metadata.name": "op-0", "metadata.namespace": "ops", "spec.nodeName": "node-1", "status.podIP": "127.1.0.7",
		"metadata.annotations['olm.targetNamespaces']": "a,b", "metadata.annotations['absent']": "",
		"spec.serviceAccountName": "sa",
	} {
		got, err := podField(pod, path)
		if err != nil || got != want {
			t.Errorf("podField(%q) = %q, %v; want %q", path, got, err, want)
		}
	}
	if _, err := podField(pod, "spec.containers"); err == nil {
		t.Error("an unsupported field path must be an error")
	}
}

func TestTheBundleInstallsLikeOLM(t *testing.T) {
	install, err := loadOperatorInstall(BundleCSV)
	if err != nil {
		t.Fatal(err)
	}
	d := install.deployment
	if d.Namespace != OperatorNamespace || d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
		t.Errorf("Deployment %s/%s replicas %v: want the CSV's two replicas in %s", d.Namespace, d.Name, d.Spec.Replicas, OperatorNamespace)
	}
	if v, ok := d.Spec.Template.Annotations["olm.targetNamespaces"]; !ok || v != "" {
		t.Errorf("pod template annotation olm.targetNamespaces = %q, %t; want an AllNamespaces OperatorGroup's", v, ok)
	}
	kinds := map[string]int{}
	for _, obj := range install.objects {
		kinds[obj.GetKind()]++
		if obj.GetKind() == "RoleBinding" && obj.GetNamespace() != OperatorNamespace {
			t.Errorf("RoleBinding %s in %q, want the install namespace", obj.GetName(), obj.GetNamespace())
		}
	}
	// The bundle's Services (metrics, metrics API, TargetSource push …) are files of their own: the count
	// follows them, not a number.
	services, err := filepath.Glob(filepath.Join(RepoRoot(), "bundle", "manifests", "*_v1_service.yaml"))
	if err != nil || len(services) == 0 {
		t.Fatalf("the bundle's Services: %v, %v", services, err)
	}
	for kind, want := range map[string]int{"Namespace": 1, "ServiceAccount": 1, "Role": 1, "RoleBinding": 1, "ClusterRoleBinding": 1, "Service": len(services), "Deployment": 1} {
		if kinds[kind] != want {
			t.Errorf("%d %s, want %d (all: %v)", kinds[kind], kind, want, kinds)
		}
	}
}
