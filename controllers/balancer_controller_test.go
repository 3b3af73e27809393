package controllers_test

import (
	"fmt"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/scale"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/balancer"
)

// balancerLook is how often the Balancers of these specs look at their targets: the pods are not watched.
const balancerLook = 300 * time.Millisecond

var _ = Describe("Balancer", Ordered, func() {
	BeforeAll(runBalancerOperator)

	It("spreads replicas 2:1 over two Deployments and follows spec.replicas written through its scale subresource", func() {
		w := newWorkloads()
		w.deployment("zone-a")
		w.deployment("zone-b")
		w.balancer("collectors", 3, operatorv1alpha1.BalancerPolicy{PolicyName: operatorv1alpha1.BalancerProportional,
			Proportions: &operatorv1alpha1.ProportionalPolicy{TargetProportions: map[string]int32{"a": 2, "b": 1}}},
			w.target("a", "Deployment", "zone-a"), w.target("b", "Deployment", "zone-b"))
		w.expectReplicas("Deployment", map[string]int32{"zone-a": 2, "zone-b": 1})
		Eventually(func(g Gomega) {
			b := w.get(g, "collectors")
			g.Expect(b.Status.Selector).To(Equal("app=collectors"))
			g.Expect(meta.IsStatusConditionTrue(b.Status.Conditions, operatorv1alpha1.ConditionBalanced)).To(BeTrue())
			g.Expect(meta.IsStatusConditionTrue(b.Status.Conditions, operatorv1alpha1.ConditionReplicasPlaced)).To(BeTrue())
		}).Should(Succeed())

		By("scaling the Balancer to 6 as an autoscaler does")
		w.scaleBalancer("collectors", 6)
		w.expectReplicas("Deployment", map[string]int32{"zone-a": 4, "zone-b": 2})
		w.addPods("zone-a", 4, true)
		w.addPods("zone-b", 2, true)
		Eventually(func(g Gomega) {
			s := w.balancerScale(g, "collectors")
			g.Expect(s.Spec.Replicas).To(Equal(int32(6)))
			g.Expect(s.Status.Replicas).To(Equal(int32(6)), "the pods of both targets")
			g.Expect(s.Status.Selector).To(Equal("app=collectors"))
			g.Expect(w.get(g, "collectors").Status.ReadyReplicas).To(Equal(int32(6)))
		}).Should(Succeed())

		By("capping zone-a at 3: zone-b takes the rest")
		w.editBalancer("collectors", func(b *operatorv1alpha1.Balancer) { b.Spec.Targets[0].MaxReplicas = ptr.To[int32](3) })
		w.expectReplicas("Deployment", map[string]int32{"zone-a": 3, "zone-b": 3})
		Eventually(func(g Gomega) {
			g.Expect(w.targetStatus(g, "collectors", "a").Reasons).To(ContainElement("max 3 reached"))
		}).Should(Succeed())
	})

	It("writes a target's scale only when it differs from what the policy gives it", func() {
		w := newWorkloads()
		w.deployment("zone-a")
		w.balancer("steady", 2, operatorv1alpha1.BalancerPolicy{PolicyName: operatorv1alpha1.BalancerPriority,
			Priorities: &operatorv1alpha1.PriorityPolicy{TargetOrder: []string{"a"}}}, w.target("a", "Deployment", "zone-a"))
		w.expectReplicas("Deployment", map[string]int32{"zone-a": 2})
		var d appsv1.Deployment
		Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: w.ns, Name: "zone-a"}, &d)).To(Succeed())
		written := d.ResourceVersion
		Consistently(func(g Gomega) string {
			g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: w.ns, Name: "zone-a"}, &d)).To(Succeed())
			return d.ResourceVersion
		}, 10*balancerLook, balancerLook/2).Should(Equal(written))
	})

	It("fills a StatefulSet, then a ReplicaSet, then a Cluster in priority order, each up to its maximum", func() {
		w := newWorkloads()
		w.statefulSet("spot")
		w.replicaSet("on-demand")
		w.cluster("reserve")
		w.balancer("spill", 5, operatorv1alpha1.BalancerPolicy{PolicyName: operatorv1alpha1.BalancerPriority,
			Priorities: &operatorv1alpha1.PriorityPolicy{TargetOrder: []string{"spot", "on-demand", "reserve"}}},
			w.targetWith("spot", "StatefulSet", "spot", 0, ptr.To[int32](2)),
			w.targetWith("on-demand", "ReplicaSet", "on-demand", 0, ptr.To[int32](2)),
			w.targetWith("reserve", "Cluster", "reserve", 0, ptr.To[int32](2)))
		w.expectReplicas("StatefulSet", map[string]int32{"spot": 2})
		w.expectReplicas("ReplicaSet", map[string]int32{"on-demand": 2})
		w.expectReplicas("Cluster", map[string]int32{"reserve": 1})

		By("asking for more than the maximums hold")
		w.scaleBalancer("spill", 7)
		w.expectReplicas("Cluster", map[string]int32{"reserve": 2})
		Eventually(func(g Gomega) {
			placed := meta.FindStatusCondition(w.get(g, "spill").Status.Conditions, operatorv1alpha1.ConditionReplicasPlaced)
			g.Expect(placed).NotTo(BeNil())
			g.Expect(placed.Reason).To(Equal(operatorv1alpha1.ReasonMaxReplicasReached))
			g.Expect(placed.Message).To(HavePrefix("1 of 7 replica(s) find no room"))
			g.Expect(w.events(g, "spill")).To(ContainElement(HavePrefix(operatorv1alpha1.EventReplicasNotPlaced)))
		}).Should(Succeed())
	})

	It("keeps every target's minimum when the minimums add up to more than replicas", func() {
		w := newWorkloads()
		w.deployment("zone-a")
		w.deployment("zone-b")
		w.balancerWith("floor", 3, nil, operatorv1alpha1.BalancerPolicy{PolicyName: operatorv1alpha1.BalancerProportional,
			Proportions: &operatorv1alpha1.ProportionalPolicy{TargetProportions: map[string]int32{"a": 1, "b": 1}}},
			w.targetWith("a", "Deployment", "zone-a", 2, nil), w.targetWith("b", "Deployment", "zone-b", 2, nil))
		w.expectReplicas("Deployment", map[string]int32{"zone-a": 2, "zone-b": 2})
		Eventually(func(g Gomega) {
			b := w.get(g, "floor")
			placed := meta.FindStatusCondition(b.Status.Conditions, operatorv1alpha1.ConditionReplicasPlaced)
			g.Expect(placed).NotTo(BeNil())
			g.Expect(placed.Reason).To(Equal(operatorv1alpha1.ReasonMinReplicasExceedReplicas))
			g.Expect(b.Status.Selector).To(Equal("app=collectors"), "what both Deployments' selectors require")
		}).Should(Succeed())
	})

	It("replaces replicas that do not start within startupTimeout in the other target, and removes the replacements once they start", func() {
		w := newWorkloads()
		w.deployment("zone-a")
		w.deployment("zone-b")
		w.balancer("fallback", 4, operatorv1alpha1.BalancerPolicy{PolicyName: operatorv1alpha1.BalancerProportional,
			Proportions: &operatorv1alpha1.ProportionalPolicy{TargetProportions: map[string]int32{"a": 1, "b": 1}},
			Fallback:    &operatorv1alpha1.BalancerFallback{StartupTimeout: metav1.Duration{Duration: 2 * time.Second}}},
			w.target("a", "Deployment", "zone-a"), w.target("b", "Deployment", "zone-b"))
		w.expectReplicas("Deployment", map[string]int32{"zone-a": 2, "zone-b": 2})
		w.addPods("zone-a", 2, true)
		stuck := w.addPods("zone-b", 2, false)
		start := time.Now()

		w.expectReplicas("Deployment", map[string]int32{"zone-a": 4, "zone-b": 2})
		Expect(time.Since(start)).To(BeNumerically(">=", 2*time.Second-time.Second), "not before the startup timeout")
		Eventually(func(g Gomega) {
			b := w.get(g, "fallback")
			g.Expect(meta.IsStatusConditionTrue(b.Status.Conditions, operatorv1alpha1.ConditionFallbackActive)).To(BeTrue())
			zoneB := w.targetStatus(g, "fallback", "b")
			g.Expect(zoneB.Blocked).To(BeTrue())
			g.Expect(zoneB.NotStarted).To(Equal(int32(2)))
			g.Expect(zoneB.NotStartedSince).NotTo(BeNil())
			g.Expect(w.targetStatus(g, "fallback", "a").Replacements).To(Equal(int32(2)))
			g.Expect(w.events(g, "fallback")).To(ContainElement(HavePrefix(operatorv1alpha1.EventFallbackStarted + ": b: 2 pod(s)")))
		}).Should(Succeed())

		By("starting zone-b's pods")
		for _, pod := range stuck {
			w.setPodReady(pod)
		}
		w.expectReplicas("Deployment", map[string]int32{"zone-a": 2, "zone-b": 2})
		Eventually(func(g Gomega) {
			fallback := meta.FindStatusCondition(w.get(g, "fallback").Status.Conditions, operatorv1alpha1.ConditionFallbackActive)
			g.Expect(fallback).NotTo(BeNil())
			g.Expect(fallback.Reason).To(Equal(operatorv1alpha1.ReasonAllStarted))
			g.Expect(w.targetStatus(g, "fallback", "b").Blocked).To(BeFalse())
			g.Expect(w.events(g, "fallback")).To(ContainElement(HavePrefix(operatorv1alpha1.EventFallbackEnded)))
		}).Should(Succeed())
	})

	It("leaves alone a missing target, a kind without scale subresource, an unknown kind and a target with its own HPA, and balances the others", func() {
		w := newWorkloads()
		w.deployment("ok")
		w.deployment("own-hpa")
		Expect(k8sClient.Create(suiteCtx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "settings"}})).To(Succeed())
		hpa := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "own-hpa"},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 5,
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "own-hpa"}}}
		Expect(k8sClient.Create(suiteCtx, hpa)).To(Succeed())
		widget := w.target("widget", "Widget", "w")
		widget.ScaleTargetRef.APIVersion = "example.com/v1"
		settings := w.target("settings", "ConfigMap", "settings")
		settings.ScaleTargetRef.APIVersion = "v1"
		w.balancer("partial", 3, operatorv1alpha1.BalancerPolicy{PolicyName: operatorv1alpha1.BalancerPriority,
			Priorities: &operatorv1alpha1.PriorityPolicy{TargetOrder: []string{"gone", "settings", "widget", "own-hpa", "ok"}}},
			w.target("gone", "Deployment", "gone"), settings, widget, w.target("own-hpa", "Deployment", "own-hpa"),
			w.target("ok", "Deployment", "ok"))
		w.expectReplicas("Deployment", map[string]int32{"ok": 3, "own-hpa": 0})
		Eventually(func(g Gomega) {
			balanced := meta.FindStatusCondition(w.get(g, "partial").Status.Conditions, operatorv1alpha1.ConditionBalanced)
			g.Expect(balanced).NotTo(BeNil())
			g.Expect(balanced.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(balanced.Reason).To(Equal(operatorv1alpha1.ReasonTargetMissing), "the first target's reason")
			g.Expect(balanced.Message).To(And(ContainSubstring(`gone: Deployment "gone" not found`),
				ContainSubstring("settings: ConfigMap \"settings\": configmaps have no scale subresource"),
				ContainSubstring("widget: Widget \"w\": the API server serves no kind Widget in example.com/v1"),
				ContainSubstring(`own-hpa: HorizontalPodAutoscaler "own-hpa" scales Deployment "own-hpa" itself`)))
			g.Expect(w.targetStatus(g, "partial", "own-hpa").Desired).To(BeNil())
			g.Expect(w.targetStatus(g, "partial", "ok").Desired).To(Equal(ptr.To[int32](3)))
			g.Expect(w.events(g, "partial")).To(ContainElement(HavePrefix(operatorv1alpha1.EventNotBalanced + ": " + operatorv1alpha1.ReasonTargetMissing)))
		}).Should(Succeed())

		By("deleting the HPA: the Balancer scales that Deployment first, as its order says")
		Expect(k8sClient.Delete(suiteCtx, hpa)).To(Succeed())
		w.expectReplicas("Deployment", map[string]int32{"own-hpa": 3, "ok": 0})
	})
})

// runBalancerOperator runs an operator with the Balancer controller alone until the end of the container.
func runBalancerOperator() {
	mgr := newManager(cfg)
	Expect(startBalancer(mgr)).To(Succeed())
	DeferCleanup(runManager(mgr).Stop)
}

// startBalancer adds the Balancer controller to the manager, looking at the targets every balancerLook.
func startBalancer(mgr ctrl.Manager) error {
	r, err := balancer.NewReconciler(mgr)
	if err != nil {
		return err
	}
	r.Period = balancerLook
	return r.SetupWithManager(mgr)
}

var workloadsSeq atomic.Int32

// workloads are the targets of a spec's Balancers in a namespace of their own, all with pods labelled
// app=collectors and zone=<workload>; envtest runs no controller, so the specs create the pods.
type workloads struct {
	ns     string
	scales scale.ScalesGetter
	pods   int
}

func newWorkloads() *workloads {
	w := &workloads{ns: fmt.Sprintf("balancer-%d", workloadsSeq.Add(1))}
	Expect(k8sClient.Create(suiteCtx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: w.ns}})).To(Succeed())
	w.scales = scaleClient(cfg)
	return w
}

// scaleClient reads and writes scale subresources as an autoscaler does.
func scaleClient(restConfig *rest.Config) scale.ScalesGetter {
	dc, err := discovery.NewDiscoveryClientForConfig(restConfig)
	Expect(err).NotTo(HaveOccurred())
	groups, err := restmapper.GetAPIGroupResources(dc)
	Expect(err).NotTo(HaveOccurred())
	s, err := scale.NewForConfig(restConfig, restmapper.NewDiscoveryRESTMapper(groups), dynamic.LegacyAPIPathResolverFunc,
		scale.NewDiscoveryScaleKindResolver(dc))
	Expect(err).NotTo(HaveOccurred())
	return s
}

func (w *workloads) podLabels(name string) map[string]string {
	return map[string]string{"app": "collectors", "zone": name}
}

func (w *workloads) podTemplate(name string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: w.podLabels(name)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "collector", Image: "ghcr.io/openconfig/gnmic:test"}}}}
}

func (w *workloads) deployment(name string) {
	Expect(k8sClient.Create(suiteCtx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](0), Selector: &metav1.LabelSelector{MatchLabels: w.podLabels(name)},
			Template: w.podTemplate(name)}})).To(Succeed())
}

func (w *workloads) statefulSet(name string) {
	Expect(k8sClient.Create(suiteCtx, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](0), Selector: &metav1.LabelSelector{MatchLabels: w.podLabels(name)},
			Template: w.podTemplate(name)}})).To(Succeed())
}

func (w *workloads) replicaSet(name string) {
	Expect(k8sClient.Create(suiteCtx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](0), Selector: &metav1.LabelSelector{MatchLabels: w.podLabels(name)},
			Template: w.podTemplate(name)}})).To(Succeed())
}

// cluster is a Cluster no operator runs here: its scale has no selector until a Cluster reconciler reports one.
func (w *workloads) cluster(name string) {
	Expect(k8sClient.Create(suiteCtx, &operatorv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name},
		Spec: operatorv1alpha1.ClusterSpec{Image: "ghcr.io/openconfig/gnmic:test", Replicas: ptr.To[int32](0)}})).To(Succeed())
}

func (w *workloads) target(name, kind, workload string) operatorv1alpha1.BalancerTarget {
	return w.targetWith(name, kind, workload, 0, nil)
}

func (w *workloads) targetWith(name, kind, workload string, minReplicas int32, maxReplicas *int32) operatorv1alpha1.BalancerTarget {
	apiVersion := "apps/v1"
	if kind == "Cluster" {
		apiVersion = operatorv1alpha1.GroupVersion.String()
	}
	t := operatorv1alpha1.BalancerTarget{Name: name, MaxReplicas: maxReplicas,
		ScaleTargetRef: operatorv1alpha1.ScaleTargetReference{APIVersion: apiVersion, Kind: kind, Name: workload}}
	if minReplicas > 0 {
		t.MinReplicas = ptr.To(minReplicas)
	}
	return t
}

// balancer creates a Balancer whose spec.selector is app=collectors.
func (w *workloads) balancer(name string, replicas int32, policy operatorv1alpha1.BalancerPolicy, targets ...operatorv1alpha1.BalancerTarget) {
	w.balancerWith(name, replicas, &metav1.LabelSelector{MatchLabels: map[string]string{"app": "collectors"}}, policy, targets...)
}

func (w *workloads) balancerWith(name string, replicas int32, selector *metav1.LabelSelector, policy operatorv1alpha1.BalancerPolicy,
	targets ...operatorv1alpha1.BalancerTarget) {
	b := &operatorv1alpha1.Balancer{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name},
		Spec: operatorv1alpha1.BalancerSpec{Replicas: ptr.To(replicas), Selector: selector, Policy: policy, Targets: targets}}
	Expect(k8sClient.Create(suiteCtx, b)).To(Succeed())
	// Operators that later specs start must not act on it.
	DeferCleanup(func() { Expect(client.IgnoreNotFound(k8sClient.Delete(suiteCtx, b))).To(Succeed()) })
}

func (w *workloads) get(g Gomega, name string) *operatorv1alpha1.Balancer {
	var b operatorv1alpha1.Balancer
	g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: w.ns, Name: name}, &b)).To(Succeed())
	return &b
}

func (w *workloads) targetStatus(g Gomega, balancer, target string) operatorv1alpha1.BalancerTargetStatus {
	for _, t := range w.get(g, balancer).Status.Targets {
		if t.Name == target {
			return t
		}
	}
	g.Expect(target).To(BeEmpty(), "no status for target %s", target)
	return operatorv1alpha1.BalancerTargetStatus{}
}

func (w *workloads) editBalancer(name string, change func(*operatorv1alpha1.Balancer)) {
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		b := w.get(Default, name)
		change(b)
		return k8sClient.Update(suiteCtx, b)
	})).To(Succeed())
}

var balancersResource = schema.GroupResource{Group: operatorv1alpha1.GroupVersion.Group, Resource: "balancers"}

// scaleBalancer writes the Balancer's spec.replicas through its scale subresource, as an autoscaler does.
func (w *workloads) scaleBalancer(name string, replicas int32) {
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := w.scales.Scales(w.ns).Get(suiteCtx, balancersResource, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		s.Spec.Replicas = replicas
		_, err = w.scales.Scales(w.ns).Update(suiteCtx, balancersResource, s, metav1.UpdateOptions{})
		return err
	})).To(Succeed())
}

func (w *workloads) balancerScale(g Gomega, name string) *autoscalingv1.Scale {
	s, err := w.scales.Scales(w.ns).Get(suiteCtx, balancersResource, name, metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	return s
}

// expectReplicas waits until the workloads of the kind hold these spec.replicas.
func (w *workloads) expectReplicas(kind string, want map[string]int32) {
	GinkgoHelper()
	resource := map[string]schema.GroupResource{"Deployment": {Group: "apps", Resource: "deployments"},
		"StatefulSet": {Group: "apps", Resource: "statefulsets"}, "ReplicaSet": {Group: "apps", Resource: "replicasets"},
		"Cluster": {Group: operatorv1alpha1.GroupVersion.Group, Resource: "clusters"}}[kind]
	Eventually(func(g Gomega) map[string]int32 {
		got := map[string]int32{}
		for name := range want {
			s, err := w.scales.Scales(w.ns).Get(suiteCtx, resource, name, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			got[name] = s.Spec.Replicas
		}
		return got
	}, 15*time.Second).Should(Equal(want))
}

// addPods creates n pods of the workload as its controller would, Ready or not started (Pending, as when no
// node can take them).
func (w *workloads) addPods(workload string, n int, ready bool) []string {
	var names []string
	for range n {
		w.pods++
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: fmt.Sprintf("%s-%d", workload, w.pods),
			Labels: w.podLabels(workload)}, Spec: w.podTemplate(workload).Spec}
		Expect(k8sClient.Create(suiteCtx, pod)).To(Succeed())
		names = append(names, pod.Name)
		if ready {
			w.setPodReady(pod.Name)
		}
	}
	return names
}

// setPodReady plays the kubelet of a pod that started.
func (w *workloads) setPodReady(name string) {
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod := &corev1.Pod{}
		if err := k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: w.ns, Name: name}, pod); err != nil {
			return err
		}
		pod.Status.Phase = corev1.PodRunning
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
		return k8sClient.Status().Update(suiteCtx, pod)
	})).To(Succeed())
}

// events are the Balancer's events as "<reason>: <message>".
func (w *workloads) events(g Gomega, balancer string) []string {
	var list corev1.EventList
	g.Expect(k8sClient.List(suiteCtx, &list, client.InNamespace(w.ns))).To(Succeed())
	var out []string
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == "Balancer" && e.InvolvedObject.Name == balancer {
			out = append(out, e.Reason+": "+e.Message)
		}
	}
	return out
}

// balanceEveryShippedKind runs a Balancer over one workload of every kind the operator may scale without a
// grant of the user's (a Deployment, a StatefulSet, a ReplicaSet and a Cluster), each of which it must read
// and write through the scale subresource. refusedNothing stops an Eventually at the first refused request.
func balanceEveryShippedKind(refusedNothing func()) {
	w := newWorkloads()
	w.deployment("pool-a")
	w.statefulSet("pool-b")
	w.replicaSet("pool-c")
	w.cluster("pool-d")
	w.balancer("every-kind", 4, operatorv1alpha1.BalancerPolicy{PolicyName: operatorv1alpha1.BalancerPriority,
		Priorities: &operatorv1alpha1.PriorityPolicy{TargetOrder: []string{"a", "b", "c", "d"}}},
		w.targetWith("a", "Deployment", "pool-a", 1, ptr.To[int32](1)), w.targetWith("b", "StatefulSet", "pool-b", 1, ptr.To[int32](1)),
		w.targetWith("c", "ReplicaSet", "pool-c", 1, ptr.To[int32](1)), w.targetWith("d", "Cluster", "pool-d", 1, ptr.To[int32](1)))
	Eventually(func(g Gomega) {
		refusedNothing()
		b := w.get(g, "every-kind")
		g.Expect(meta.IsStatusConditionTrue(b.Status.Conditions, operatorv1alpha1.ConditionBalanced)).To(BeTrue(), "%v", b.Status.Conditions)
	}, 30*time.Second).Should(Succeed())
	w.expectReplicas("Deployment", map[string]int32{"pool-a": 1})
	w.expectReplicas("StatefulSet", map[string]int32{"pool-b": 1})
	w.expectReplicas("ReplicaSet", map[string]int32{"pool-c": 1})
	w.expectReplicas("Cluster", map[string]int32{"pool-d": 1})
}
