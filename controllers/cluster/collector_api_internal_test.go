package cluster

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/internal/rejection"
)

func answeringAs(t *testing.T, release string) gnmic.APILevel {
	t.Helper()
	r, err := gnmic.ParseRelease(release)
	if err != nil {
		t.Fatal(err)
	}
	return gnmic.APILevel{AnswersAs: r, Evidence: "probed"}
}

func TestAContainerThatExitedWithoutACollectCommandIsTheOldestAPI(t *testing.T) {
	exited := func(state corev1.ContainerState, last corev1.ContainerState) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
			{Name: "gnmic", State: state, LastTerminationState: last}}}}
	}
	cobra := "Error: unknown command \"collect\" for \"gnmic\"\nRun 'gnmic --help' for usage.\n"
	for _, tt := range []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{"crash-looping, last termination", exited(corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
			corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: cobra}}),
			`Error: unknown command "collect" for "gnmic"`},
		{"just exited", exited(corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: cobra}},
			corev1.ContainerState{}), `Error: unknown command "collect" for "gnmic"`},
		{"exited for another reason", exited(corev1.ContainerState{},
			corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}), ""},
		{"running", exited(corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}, corev1.ContainerState{}), ""},
	} {
		got, ok := exitedWithoutCollect(tt.pod)
		if ok != (tt.want != "") || got != tt.want {
			t.Errorf("%s: exitedWithoutCollect = %q, %v; want %q", tt.name, got, ok, tt.want)
		}
	}
}

func TestWhatAClusterNeedsIsWhatItUses(t *testing.T) {
	plain := &operatorv1alpha1.Cluster{}
	tunnel := &operatorv1alpha1.Cluster{Spec: operatorv1alpha1.ClusterSpec{GRPCTunnel: &operatorv1alpha1.GRPCTunnelSpec{}}}
	clickhouse := &world{rendered: gnmic.Config{Outputs: map[string]map[string]any{"ch": {"type": "clickhouse"}, "f": {"type": "file"}}}}
	none := &world{}
	for _, tt := range []struct {
		name    string
		cluster *operatorv1alpha1.Cluster
		w       *world
		release string
		want    []string
	}{
		{"0.46 for a Cluster without tunnels or new output types", plain, none, "0.44.0", nil},
		{"0.46 for a Cluster with a tunnel server", tunnel, none, "0.44.0", []string{"tunnel-target-matches (0.47.0)"}},
		{"0.46 for a Cluster sending to clickhouse", plain, clickhouse, "0.44.0", []string{"clickhouse outputs (0.47.0)"}},
		{"0.43", plain, none, "0.43.0", []string{"state streams (0.44.0)"}},
		{"0.42", plain, none, "0.42.0", []string{"config apply (0.43.0)", "state streams (0.44.0)"}},
		{"0.47", tunnel, clickhouse, "0.47.0", nil},
	} {
		got := missingFor(answeringAs(t, tt.release), usedFeatures(tt.cluster), tt.w)
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("%s: missing %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestAnOutputIsTooOldForCollectorsWithoutItsTypeOrItsState(t *testing.T) {
	for _, tt := range []struct {
		release, kind, typ string
		mentions           string
	}{
		{"0.44.0", rejection.KindOutput, "clickhouse", "type clickhouse (gNMIc 0.47.0"},
		{"0.44.0", rejection.KindOutput, "file", ""},
		{"0.43.0", rejection.KindOutput, "file", "state streams"},
		{"0.43.0", rejection.KindInput, "kafka", "state streams"},
		{"0.42.0", rejection.KindOutput, "otlp", "config apply"},
		{"0.47.0", rejection.KindOutput, "clickhouse", ""},
	} {
		since := gnmic.OutputTypes
		if tt.kind == rejection.KindInput {
			since = gnmic.InputTypes
		}
		got := tooOldFor(answeringAs(t, tt.release), tt.kind, tt.typ, since)
		if (tt.mentions == "") != (got == "") || !strings.Contains(got, tt.mentions) {
			t.Errorf("%s %s on %s: %q, want it to mention %q", tt.kind, tt.typ, tt.release, got, tt.mentions)
		}
	}
}

func TestTheTooOldMessageNamesPodsImageWhatTheyLackAndTheReleaseToUse(t *testing.T) {
	msg := tooOldMessage(map[string]*tooOldGroup{
		"b": {image: "ghcr.io/openconfig/gnmic:0.46.0", releases: "0.44.0 to 0.46.x", evidence: "probed",
			missing: []string{"tunnel-target-matches (0.47.0)"}, pods: []string{"c-2"}},
		"a": {image: "ghcr.io/openconfig/gnmic:0.42.0", releases: "0.42.x or older", evidence: "container exited",
			missing: []string{"config apply (0.43.0)"}, pods: []string{"c-0", "c-1"}},
	})
	for _, want := range []string{"pod(s) c-0, c-1 (image ghcr.io/openconfig/gnmic:0.42.0) answer as gNMIc 0.42.x or older",
		"config apply (0.43.0)", "pod(s) c-2", "tunnel-target-matches (0.47.0)", "needs gNMIc 0.47.0 or newer", gnmic.DefaultImage} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not say %q", msg, want)
		}
	}
	if strings.Index(msg, "c-0") > strings.Index(msg, "c-2") {
		t.Errorf("groups are not in a stable order: %q", msg)
	}
}
