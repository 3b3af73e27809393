package plan_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/placement"
	"github.com/gnmic-operator/gnmic-operator/internal/plan"
	"github.com/gnmic-operator/gnmic-operator/test/testenv"
)

// The live plan against a real kube-apiserver (envtest). The Targets' statuses are written here as the
// operator writes them for a settled fleet: where the plan reads "now" from. That "after" is where the
// running operator then puts the targets is the e2e suite's concern (test/e2e/plan_test.go).

func TestLivePlan(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Live plan")
}

var (
	env       *envtest.Environment
	k8sClient client.Client
	ctx       = context.Background()
)

var _ = BeforeSuite(func() {
	var err error
	env, _, err = testenv.Start(testenv.Options{})
	Expect(err).NotTo(HaveOccurred())
	scheme := runtime.NewScheme()
	Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	Expect(operatorv1alpha1.AddToScheme(scheme)).To(Succeed())
	k8sClient, err = client.New(env.Config, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

// answer mirrors the JSON schema docs/planning.md documents; decoding rejects any other member.
type answer struct {
	Cluster         string   `json:"cluster"`
	Replicas        change   `json:"replicas"`
	PodCapacity     change   `json:"podCapacity"`
	Capacity        int      `json:"capacity"`
	Pods            []pod    `json:"pods"`
	UnassignedNow   []string `json:"unassignedNow"`
	UnassignedAfter []string `json:"unassignedAfter"`
	Skipped         []string `json:"skipped"`
	Moves           []move   `json:"moves"`
	LowerBoundMoves int      `json:"lowerBoundMoves"`
}

type change struct {
	Now   int `json:"now"`
	After int `json:"after"`
}

type pod struct {
	Name         string   `json:"name"`
	DesiredNow   bool     `json:"desiredNow"`
	DesiredAfter bool     `json:"desiredAfter"`
	Now          []string `json:"now"`
	After        []string `json:"after"`
}

type move struct {
	Target string `json:"target"`
	From   string `json:"from"`
	To     string `json:"to"`
}

// secretValue is the password of the targets' credentials: it must never appear in a plan.
const secretValue = "s3cr3t-Pa55w0rd-never-printed"

// fleet is one namespace with a Cluster "telemetry" of 3 pods, 12 selected targets settled on its pods, one
// selected target the operator reports as Skipped and one target no Pipeline selects.
type fleet struct {
	namespace string
	// settled is where each selected target's status records it: pod ordinal.
	settled map[string]int
}

func newFleet(namespace string, podCapacity *int32) fleet {
	GinkgoHelper()
	f := fleet{namespace: namespace, settled: map[string]int{}}
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "credentials"},
			StringData: map[string]string{"username": "admin", "password": secretValue}},
		&operatorv1alpha1.TargetProfile{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "routers"},
			Spec: operatorv1alpha1.TargetProfileSpec{CredentialsRef: "credentials"}},
		&operatorv1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "counters", Labels: map[string]string{"set": "basic"}},
			Spec: operatorv1alpha1.SubscriptionSpec{Paths: []string{"/interfaces"}, Mode: "STREAM/SAMPLE"}},
		&operatorv1alpha1.Pipeline{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "leaves"},
			Spec: operatorv1alpha1.PipelineSpec{ClusterRef: "telemetry",
				TargetSelectors:       []metav1.LabelSelector{{MatchLabels: map[string]string{"role": "leaf"}}},
				SubscriptionSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"set": "basic"}}}}},
		&operatorv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "telemetry"},
			Spec: operatorv1alpha1.ClusterSpec{Image: gnmic.DefaultImage, Replicas: ptr.To[int32](3),
				TargetDistribution: operatorv1alpha1.TargetDistribution{PodCapacity: podCapacity}}},
	} {
		Expect(k8sClient.Create(ctx, obj)).To(Succeed())
	}

	// Settled: the targets where placement puts them on pods 0..2, as the operator's status says.
	in := placement.Input{Pods: []int{0, 1, 2}}
	for i := range 12 {
		in.Targets = append(in.Targets, placement.Target{Name: fmt.Sprintf("leaf-%02d", i)})
	}
	if podCapacity != nil {
		in.PodCapacity = int(*podCapacity)
	}
	settled := placement.Place(in)
	Expect(settled.Unassigned).To(BeEmpty())
	f.settled = settled.Assignments
	for name, ordinal := range settled.Assignments {
		f.createTarget(name, map[string]string{"role": "leaf"}, &operatorv1alpha1.TargetClusterState{
			Pod: fmt.Sprintf("telemetry-%d", ordinal), State: operatorv1alpha1.TargetAssigned, Collecting: true})
	}
	f.createTarget("broken", map[string]string{"role": "leaf"}, &operatorv1alpha1.TargetClusterState{
		State: operatorv1alpha1.TargetSkipped, Message: "not sent to any collector: a missing Secret"})
	f.createTarget("unselected", map[string]string{"role": "spine"}, nil)
	return f
}

func (f fleet) createTarget(name string, labels map[string]string, state *operatorv1alpha1.TargetClusterState) {
	GinkgoHelper()
	t := &operatorv1alpha1.Target{ObjectMeta: metav1.ObjectMeta{Namespace: f.namespace, Name: name, Labels: labels},
		Spec: operatorv1alpha1.TargetSpec{Address: "192.0.2.77:57400", Profile: "routers"}}
	Expect(k8sClient.Create(ctx, t)).To(Succeed())
	if state == nil {
		return
	}
	state.LastUpdated = metav1.Now()
	t.Status.ClusterStates = map[string]operatorv1alpha1.TargetClusterState{"telemetry": *state}
	Expect(k8sClient.Status().Update(ctx, t)).To(Succeed())
}

// kubeconfigOf writes a kubeconfig for a new envtest user in the given groups and returns its path.
func kubeconfigOf(user string, groups ...string) string {
	GinkgoHelper()
	u, err := env.AddUser(envtest.User{Name: user, Groups: groups}, nil)
	Expect(err).NotTo(HaveOccurred())
	raw, err := u.KubeConfig()
	Expect(err).NotTo(HaveOccurred())
	path := filepath.Join(GinkgoT().TempDir(), "kubeconfig")
	Expect(os.WriteFile(path, raw, 0o600)).To(Succeed())
	return path
}

// documentedRole is the Role docs/planning.md tells users to grant for plan --cluster, in namespace.
func documentedRole(namespace string) *rbacv1.Role {
	GinkgoHelper()
	doc, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "docs", "planning.md"))
	Expect(err).NotTo(HaveOccurred())
	for _, block := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(doc), -1) {
		for _, part := range strings.Split(block[1], "\n---\n") {
			if !strings.Contains("\n"+part, "\nkind: Role\n") {
				continue
			}
			var role rbacv1.Role
			Expect(yaml.UnmarshalStrict([]byte(part), &role)).To(Succeed())
			if role.Kind == "Role" {
				role.Namespace = namespace
				return &role
			}
		}
	}
	Fail("docs/planning.md has no yaml block with a Role")
	return nil
}

// grant binds user to role in its namespace.
func grant(user string, role *rbacv1.Role) {
	GinkgoHelper()
	Expect(k8sClient.Create(ctx, role)).To(Succeed())
	Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: role.Namespace, Name: role.Name + "-" + user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	})).To(Succeed())
}

// runPlan runs `gnmic-operator plan` with args and returns its status, stdout and stderr.
func runPlan(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	status := plan.Main(args, strings.NewReader(""), &stdout, &stderr)
	return status, stdout.String(), stderr.String()
}

// planJSON runs the plan with -o json and decodes its answer strictly.
func planJSON(args ...string) answer {
	GinkgoHelper()
	status, stdout, stderr := runPlan(append(args, "-o", "json")...)
	Expect(stderr).To(BeEmpty())
	Expect(status).To(Equal(0))
	var a answer
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	Expect(dec.Decode(&a)).To(Succeed(), stdout)
	Expect(strings.Count(stdout, "\n")).To(Equal(1), "one line")
	for _, list := range []string{`"unassignedNow":[`, `"unassignedAfter":[`, `"skipped":[`, `"moves":[`, `"pods":[`, `"now":[`, `"after":[`} {
		Expect(stdout).To(ContainSubstring(list), "a list is null instead of empty")
	}
	return a
}

// placedAfter maps each target to its pod after the change, as the answer says.
func (a answer) placedAfter() map[string]string {
	out := map[string]string{}
	for _, p := range a.Pods {
		for _, t := range p.After {
			Expect(out).NotTo(HaveKey(t), "target %s on two pods", t)
			out[t] = p.Name
		}
	}
	return out
}

// expectedAfter is what placement itself computes for the fleet on pods with capacity: the plan must
// agree with the operator's placement core.
func (f fleet) expectedAfter(pods []int, capacity int) placement.Result {
	in := placement.Input{Pods: pods, PodCapacity: capacity, Current: map[string]int{}}
	for name, ordinal := range f.settled {
		in.Targets = append(in.Targets, placement.Target{Name: name})
		in.Current[name] = ordinal
	}
	return placement.Place(in)
}

var _ = Describe("plan --cluster", Ordered, func() {
	var (
		f     fleet
		admin string
	)
	BeforeAll(func() {
		f = newFleet("plan-live", nil)
		admin = kubeconfigOf("plan-admin", "system:masters")
	})

	It("without a change plans no move: after is now", func() {
		a := planJSON("--cluster", "plan-live/telemetry", "--kubeconfig", admin)
		Expect(a.Cluster).To(Equal("plan-live/telemetry"))
		Expect(a.Replicas).To(Equal(change{Now: 3, After: 3}))
		Expect(a.PodCapacity).To(Equal(change{Now: 0, After: 0}))
		Expect(a.Capacity).To(Equal(4))
		Expect(a.Moves).To(BeEmpty())
		Expect(a.LowerBoundMoves).To(BeZero())
		Expect(a.Skipped).To(Equal([]string{"broken"}))
		Expect(a.UnassignedNow).To(BeEmpty())
		Expect(a.UnassignedAfter).To(BeEmpty())
		Expect(a.Pods).To(HaveLen(3))
		for i, p := range a.Pods {
			Expect(p.Name).To(Equal(fmt.Sprintf("telemetry-%d", i)))
			Expect(p.DesiredNow && p.DesiredAfter).To(BeTrue())
			Expect(p.After).To(Equal(p.Now))
			for _, t := range p.Now {
				Expect(f.settled[t]).To(Equal(i), "target %s", t)
			}
		}
		Expect(a.placedAfter()).To(HaveLen(12), "every selected target but the skipped one, and not the unselected one")
	})

	It("with --replicas 4 plans what placement does on 4 pods, with the fewest moves", func() {
		a := planJSON("--cluster", "plan-live/telemetry", "--kubeconfig", admin, "--replicas", "4")
		want := f.expectedAfter([]int{0, 1, 2, 3}, 0)
		Expect(a.Replicas).To(Equal(change{Now: 3, After: 4}))
		Expect(a.Capacity).To(Equal(want.Capacity))
		Expect(a.Pods).To(HaveLen(4))
		Expect(a.Pods[3].Name).To(Equal("telemetry-3"))
		Expect(a.Pods[3].DesiredNow).To(BeFalse())
		Expect(a.Pods[3].DesiredAfter).To(BeTrue())
		Expect(a.Pods[3].Now).To(BeEmpty())
		Expect(a.Pods[3].After).To(HaveLen(3))
		after := a.placedAfter()
		Expect(after).To(HaveLen(12))
		for name, ordinal := range want.Assignments {
			Expect(after[name]).To(Equal(fmt.Sprintf("telemetry-%d", ordinal)), "target %s", name)
		}
		Expect(a.Moves).To(HaveLen(want.LowerBoundMoves))
		Expect(a.LowerBoundMoves).To(Equal(3), "12 targets on 4 pods: 3 each, so pod 3 takes 3")
		for _, m := range a.Moves {
			Expect(m.From).To(Equal(fmt.Sprintf("telemetry-%d", f.settled[m.Target])))
			Expect(m.To).To(Equal("telemetry-3"))
		}
	})

	It("with --replicas 2 --pod-capacity 5 plans the targets of the removed pod and those that fit nowhere", func() {
		a := planJSON("--cluster", "plan-live/telemetry", "--kubeconfig", admin, "--replicas", "2", "--pod-capacity", "5")
		want := f.expectedAfter([]int{0, 1}, 5)
		Expect(a.PodCapacity).To(Equal(change{Now: 0, After: 5}))
		Expect(a.Capacity).To(Equal(5))
		Expect(a.UnassignedAfter).To(Equal(want.Unassigned))
		Expect(a.UnassignedAfter).To(HaveLen(2))
		Expect(a.Pods[2].DesiredAfter).To(BeFalse())
		Expect(a.Pods[2].After).To(BeEmpty())
		Expect(len(a.Pods[0].After) + len(a.Pods[1].After)).To(Equal(10))
		Expect(a.Moves).To(HaveLen(want.LowerBoundMoves))
		for _, m := range a.Moves {
			if slices.Contains(a.UnassignedAfter, m.Target) {
				Expect(m.To).To(BeEmpty())
			} else {
				Expect(m.From).To(Equal("telemetry-2"))
			}
		}
	})

	It("prints a table for people", func() {
		status, stdout, stderr := runPlan("--cluster", "plan-live/telemetry", "--kubeconfig", admin, "--replicas", "4", "-o", "table")
		GinkgoWriter.Print(stdout)
		_, j, _ := runPlan("--cluster", "plan-live/telemetry", "--kubeconfig", admin, "--replicas", "4", "-o", "json")
		GinkgoWriter.Print(j)
		Expect(stdout).NotTo(MatchRegexp(`(?m) $`), "no trailing white space")
		Expect(stderr).To(BeEmpty())
		Expect(status).To(Equal(0))
		Expect(stdout).To(HavePrefix("cluster plan-live/telemetry: replicas 3 -> 4, podCapacity automatic -> automatic (capacity after: 3)\n\nPOD"))
		Expect(stdout).To(MatchRegexp(`(?m)^telemetry-3\s+0\s+3\s+3\s+0\s+added$`))
		Expect(stdout).To(ContainSubstring("unassigned: 0 now, 0 after\n"))
		Expect(stdout).To(ContainSubstring("skipped (cannot be configured, on no pod): 1\n  broken\n"))
		Expect(stdout).To(ContainSubstring("moves: 3 (lower bound 3)\n"))
	})

	It("runs with only the Role docs/planning.md documents, reads no Secret and prints no credential or address", func() {
		grant("plan-reader", documentedRole("plan-live"))
		reader := kubeconfigOf("plan-reader")
		for _, format := range []string{"json", "table"} {
			status, stdout, stderr := runPlan("--cluster", "plan-live/telemetry", "--kubeconfig", reader, "--replicas", "4", "-o", format)
			Expect(stderr).To(BeEmpty())
			Expect(status).To(Equal(0))
			Expect(stdout).NotTo(ContainSubstring(secretValue))
			Expect(stdout).NotTo(ContainSubstring("admin"))
			Expect(stdout).NotTo(ContainSubstring("192.0.2.77"))
			Expect(stdout).NotTo(ContainSubstring("credentials"))
		}
		Expect(documentedRole("plan-live").Rules).NotTo(ContainElement(HaveField("Resources", ContainElement("secrets"))))
	})

	It("names the verb and resource a user lacks", func() {
		nobody := kubeconfigOf("plan-nobody")
		status, stdout, stderr := runPlan("--cluster", "plan-live/telemetry", "--kubeconfig", nobody)
		GinkgoWriter.Print(stderr)
		Expect(status).To(Equal(1))
		Expect(stdout).To(BeEmpty())
		Expect(stderr).To(HavePrefix(`plan: forbidden: your kubeconfig's user may not get clusters.operator.gnmic.dev in namespace plan-live (needs verb "get" on resource "clusters" of API group "operator.gnmic.dev"): `))
		Expect(strings.Count(stderr, "\n")).To(Equal(1))

		role := documentedRole("plan-live")
		role.Name = "plan-without-targets"
		for i := range role.Rules {
			role.Rules[i].Resources = slices.DeleteFunc(role.Rules[i].Resources, func(r string) bool { return r == "targets" })
		}
		grant("plan-partial", role)
		partial := kubeconfigOf("plan-partial")
		status, _, stderr = runPlan("--cluster", "plan-live/telemetry", "--kubeconfig", partial)
		Expect(status).To(Equal(1))
		Expect(stderr).To(HavePrefix(`plan: forbidden: your kubeconfig's user may not list targets.operator.gnmic.dev in namespace plan-live (needs verb "list" on resource "targets" of API group "operator.gnmic.dev"): `))
	})

	It("says when the Cluster does not exist", func() {
		status, stdout, stderr := runPlan("--cluster", "plan-live/missing", "--kubeconfig", admin)
		Expect(status).To(Equal(1))
		Expect(stdout).To(BeEmpty())
		Expect(stderr).To(Equal("plan: cluster plan-live/missing not found\n"))
	})

	It("uses the kubeconfig of KUBECONFIG and its --context", func() {
		// One kubeconfig, two contexts: the current one a user without permissions, "planner" the admin.
		cfg, err := clientcmd.LoadFromFile(kubeconfigOf("plan-nobody-2"))
		Expect(err).NotTo(HaveOccurred())
		adminCfg, err := clientcmd.LoadFromFile(admin)
		Expect(err).NotTo(HaveOccurred())
		adminContext := adminCfg.Contexts[adminCfg.CurrentContext]
		cfg.AuthInfos["planner"] = adminCfg.AuthInfos[adminContext.AuthInfo]
		cfg.Contexts["planner"] = &clientcmdapi.Context{Cluster: cfg.Contexts[cfg.CurrentContext].Cluster, AuthInfo: "planner"}
		both := filepath.Join(GinkgoT().TempDir(), "kubeconfig")
		Expect(clientcmd.WriteToFile(*cfg, both)).To(Succeed())
		GinkgoT().Setenv("KUBECONFIG", both)

		status, _, stderr := runPlan("--cluster", "plan-live/telemetry")
		Expect(status).To(Equal(1))
		Expect(stderr).To(HavePrefix("plan: forbidden: your kubeconfig's user may not get clusters.operator.gnmic.dev"))
		a := planJSON("--cluster", "plan-live/telemetry", "--context", "planner")
		Expect(a.Pods).To(HaveLen(3))
		status, _, stderr = runPlan("--cluster", "plan-live/telemetry", "--context", "no-such-context")
		Expect(status).To(Equal(1))
		Expect(stderr).To(Equal("plan: load kubeconfig: context \"no-such-context\" does not exist\n"))
	})
})

var _ = Describe("plan --cluster with a fixed podCapacity", func() {
	It("plans lowering it: the excess of every pod leaves, unassigned", func() {
		f := newFleet("plan-capacity", ptr.To[int32](4))
		admin := kubeconfigOf("plan-capacity-admin", "system:masters")
		a := planJSON("--cluster", "plan-capacity/telemetry", "--kubeconfig", admin, "--pod-capacity", "3")
		want := f.expectedAfter([]int{0, 1, 2}, 3)
		Expect(a.PodCapacity).To(Equal(change{Now: 4, After: 3}))
		Expect(a.UnassignedAfter).To(Equal(want.Unassigned))
		Expect(a.UnassignedAfter).To(HaveLen(12 - 9))
		Expect(a.Moves).To(HaveLen(want.LowerBoundMoves))
		for _, m := range a.Moves {
			Expect(m.To).To(BeEmpty())
		}
		back := planJSON("--cluster", "plan-capacity/telemetry", "--kubeconfig", admin, "--pod-capacity", "0")
		Expect(back.PodCapacity).To(Equal(change{Now: 4, After: 0}))
		Expect(back.Moves).To(BeEmpty())
	})
})
