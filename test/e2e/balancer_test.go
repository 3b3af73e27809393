//go:build e2e

package e2e_test

import (
	"fmt"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

// balancerResult is what test/e2e/results/balancer.json holds; docs/balancer.md shows it.
type balancerResult struct {
	Scenario              string `json:"scenario"`
	StartupTimeoutSeconds int    `json:"startupTimeoutSeconds"`
	BalancerPeriodSeconds int    `json:"balancerPeriodSeconds"`
	// HPA: 40 then 60 targets at 10 per pod, 1:1 over zone-a and zone-b.
	SecondsToHPAScaleUp float64 `json:"secondsFrom20MoreTargetsToSixPodsReadyInTwoZones"`
	// Zone B's nodes cordoned and its pods evicted.
	SecondsToReplacementsWritten float64 `json:"secondsFromZoneLossToZoneAScaled"`
	SecondsToReplacementsReady   float64 `json:"secondsFromZoneLossToZoneAHoldingTheReplacements"`
	// Zone B's nodes uncordoned.
	SecondsToZoneBReady     float64 `json:"secondsFromZoneReturnToZoneBReady"`
	SecondsToRestored       float64 `json:"secondsFromZoneReturnToProportionsRestored"`
	ZoneAPodsDuringLoss     int     `json:"zoneAPodsDuringLoss"`
	ZoneAPodsAfterReturn    int     `json:"zoneAPodsAfterReturn"`
	SecondsToSpotFallback   float64 `json:"secondsFromSpotShortageToOnDemandReplacementReady"`
	SpotPodsNotStarted      int     `json:"spotPodsNotStarted"`
	OnDemandWithReplacement int     `json:"onDemandPodsWithTheReplacement"`
}

var _ = Describe("Balancer over Deployments in two zones and two node pools", Ordered, func() {
	const (
		ns             = "balancer"
		startupTimeout = 20 * time.Second
		// balancerPeriod is the operator's DefaultBalancerPeriod: how often a Balancer looks at its targets' pods.
		balancerPeriod = 10 * time.Second
		// podsPerTarget is the HPA's AverageValue on targets_demand: one pod per 10 Targets.
		podsPerTarget = 10
	)
	// demand is a Cluster with no pods whose Targets the HPA counts (targets_demand): the load that sizes the
	// Balancer, as it would size a collector fleet.
	demand := harness.Fleet{Namespace: ns, Cluster: "demand", Replicas: 0}
	zoneA := map[string]string{corev1.LabelTopologyZone: "balancer-a"}
	zoneB := map[string]string{corev1.LabelTopologyZone: "balancer-b"}
	spot := map[string]string{"gnmic-e2e/pool": "balancer-spot"}
	onDemand := map[string]string{"gnmic-e2e/pool": "balancer-on-demand"}
	result := balancerResult{Scenario: "balancer", StartupTimeoutSeconds: int(startupTimeout.Seconds()),
		BalancerPeriodSeconds: int(balancerPeriod.Seconds())}
	fallback := &operatorv1alpha1.BalancerFallback{StartupTimeout: metav1.Duration{Duration: startupTimeout}}

	BeforeAll(func() {
		Expect(demand.Create(ctx, cp, k8sClient)).To(Succeed())
		Expect(cp.AddNodes(ctx,
			harness.NodeSpec{Name: "balancer-a-0", Labels: zoneA, Pods: 10}, harness.NodeSpec{Name: "balancer-a-1", Labels: zoneA, Pods: 10},
			harness.NodeSpec{Name: "balancer-b-0", Labels: zoneB, Pods: 10}, harness.NodeSpec{Name: "balancer-b-1", Labels: zoneB, Pods: 10},
			harness.NodeSpec{Name: "balancer-spot-0", Labels: spot, Pods: 3},
			harness.NodeSpec{Name: "balancer-on-demand-0", Labels: onDemand, Pods: 20})).To(Succeed())
		// Only this scenario's pods tolerate the taint: the suite's collector pods stay off these nodes.
		for _, node := range []string{"balancer-a-0", "balancer-a-1", "balancer-b-0", "balancer-b-1", "balancer-spot-0", "balancer-on-demand-0"} {
			patchPoolNode(node, `{"spec":{"taints":[{"key":"gnmic-e2e/balancer","value":"true","effect":"NoSchedule"}]}}`)
		}
		poolDeployment(ns, "collectors-a", "collectors", zoneA)
		poolDeployment(ns, "collectors-b", "collectors", zoneB)
		poolDeployment(ns, "pool-spot", "pools", spot)
		poolDeployment(ns, "pool-on-demand", "pools", onDemand)
	})

	AfterAll(func() { writeResult("balancer", result) })

	It("an HPA on a Balancer over two Deployments, proportional 1:1, scales them together", func() {
		Expect(k8sClient.Create(ctx, &operatorv1alpha1.Balancer{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "collectors"},
			Spec: operatorv1alpha1.BalancerSpec{
				Replicas: ptr.To[int32](1),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "collectors"}},
				Targets:  []operatorv1alpha1.BalancerTarget{deploymentTarget("zone-a", "collectors-a"), deploymentTarget("zone-b", "collectors-b")},
				Policy: operatorv1alpha1.BalancerPolicy{PolicyName: operatorv1alpha1.BalancerProportional, Fallback: fallback,
					Proportions: &operatorv1alpha1.ProportionalPolicy{TargetProportions: map[string]int32{"zone-a": 1, "zone-b": 1}}},
			}})).To(Succeed())
		Expect(demand.AddTargets(ctx, k8sClient, 0, 40)).To(Succeed())
		_, err := cp.Clientset.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, balancerAutoscaler(ns, "collectors", demand.Cluster, podsPerTarget), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			g.Expect(balancerReplicas(g, ns, "collectors")).To(Equal(int32(4)), "the HPA's decision, written through the scale subresource")
			g.Expect(readyPoolPods(g, ns, zoneA)).To(Equal(2))
			g.Expect(readyPoolPods(g, ns, zoneB)).To(Equal(2))
			g.Expect(getBalancer(g, ns, "collectors").Status.Replicas).To(Equal(int32(4)))
		}).WithTimeout(2 * time.Minute).Should(Succeed())

		start := time.Now()
		Expect(demand.AddTargets(ctx, k8sClient, 40, 60)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(balancerReplicas(g, ns, "collectors")).To(Equal(int32(6)))
			g.Expect(readyPoolPods(g, ns, zoneA)).To(Equal(3))
			g.Expect(readyPoolPods(g, ns, zoneB)).To(Equal(3))
		}).WithTimeout(2 * time.Minute).Should(Succeed())
		result.SecondsToHPAScaleUp = roundedSeconds(time.Since(start))
		Eventually(func(g Gomega) int32 {
			hpa, err := cp.Clientset.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "collectors", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			return hpa.Status.CurrentReplicas
		}).WithTimeout(30*time.Second).Should(Equal(int32(6)), "the HPA reads the Balancer's status.replicas")
	})

	It("runs zone B's replicas in zone A once they have not started within startupTimeout, and brings them back when zone B returns", func() {
		By("cordoning zone B's nodes and evicting its pods, as a zone outage does")
		start := time.Now()
		for _, node := range []string{"balancer-b-0", "balancer-b-1"} {
			patchPoolNode(node, `{"spec":{"unschedulable":true}}`)
		}
		Expect(k8sClient.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns), client.MatchingLabels(poolLabels(zoneB)))).To(Succeed())
		Eventually(func(g Gomega) int32 {
			return poolReplicas(g, ns, "collectors-a")
		}).WithTimeout(startupTimeout + 2*balancerPeriod + 30*time.Second).WithPolling(100 * time.Millisecond).Should(Equal(int32(6)))
		result.SecondsToReplacementsWritten = roundedSeconds(time.Since(start))
		Expect(time.Since(start)).To(BeNumerically(">=", startupTimeout-time.Second), "not before the startup timeout")
		Eventually(func(g Gomega) int {
			return readyPoolPods(g, ns, zoneA)
		}).WithTimeout(time.Minute).WithPolling(100 * time.Millisecond).Should(Equal(6))
		result.SecondsToReplacementsReady = roundedSeconds(time.Since(start))
		Eventually(func(g Gomega) {
			b := getBalancer(g, ns, "collectors")
			g.Expect(meta.IsStatusConditionTrue(b.Status.Conditions, operatorv1alpha1.ConditionFallbackActive)).To(BeTrue())
			g.Expect(b.Spec.Replicas).To(Equal(ptr.To[int32](6)), "the HPA's total is unchanged")
			zb := balancerTarget(b, "zone-b")
			g.Expect(zb.Blocked).To(BeTrue())
			g.Expect(zb.Desired).To(Equal(ptr.To[int32](3)), "zone B keeps its share, so that its pods start when it returns")
			g.Expect(balancerTarget(b, "zone-a").Replacements).To(Equal(int32(3)))
		}).WithTimeout(balancerPeriod + 10*time.Second).Should(Succeed())
		result.ZoneAPodsDuringLoss = readyPoolPods(Default, ns, zoneA)

		By("uncordoning zone B")
		start = time.Now()
		for _, node := range []string{"balancer-b-0", "balancer-b-1"} {
			patchPoolNode(node, `{"spec":{"unschedulable":false}}`)
		}
		Eventually(func(g Gomega) int {
			return readyPoolPods(g, ns, zoneB)
		}).WithTimeout(time.Minute).WithPolling(100 * time.Millisecond).Should(Equal(3))
		result.SecondsToZoneBReady = roundedSeconds(time.Since(start))
		Eventually(func(g Gomega) {
			g.Expect(poolReplicas(g, ns, "collectors-a")).To(Equal(int32(3)))
			g.Expect(livePoolPods(g, ns, zoneA)).To(Equal(3))
		}).WithTimeout(2*balancerPeriod + 30*time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())
		result.SecondsToRestored = roundedSeconds(time.Since(start))
		result.ZoneAPodsAfterReturn = livePoolPods(Default, ns, zoneA)
		Eventually(func(g Gomega) {
			b := getBalancer(g, ns, "collectors")
			g.Expect(meta.IsStatusConditionTrue(b.Status.Conditions, operatorv1alpha1.ConditionFallbackActive)).To(BeFalse())
			g.Expect(b.Status.ReadyReplicas).To(Equal(int32(6)))
		}).WithTimeout(balancerPeriod + 10*time.Second).Should(Succeed())
	})

	It("fills spot before on-demand, spills at spot's maximum, and replaces on on-demand what spot cannot start", func() {
		Expect(k8sClient.Create(ctx, &operatorv1alpha1.Balancer{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pools"},
			Spec: operatorv1alpha1.BalancerSpec{
				Replicas: ptr.To[int32](2),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "pools"}},
				Targets: []operatorv1alpha1.BalancerTarget{
					{Name: "spot", ScaleTargetRef: deploymentRef("pool-spot"), MaxReplicas: ptr.To[int32](4)},
					{Name: "on-demand", ScaleTargetRef: deploymentRef("pool-on-demand"), MinReplicas: ptr.To[int32](0)},
				},
				Policy: operatorv1alpha1.BalancerPolicy{PolicyName: operatorv1alpha1.BalancerPriority, Fallback: fallback,
					Priorities: &operatorv1alpha1.PriorityPolicy{TargetOrder: []string{"spot", "on-demand"}}},
			}})).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(poolReplicas(g, ns, "pool-spot")).To(Equal(int32(2)))
			g.Expect(poolReplicas(g, ns, "pool-on-demand")).To(Equal(int32(0)))
			g.Expect(readyPoolPods(g, ns, spot)).To(Equal(2))
		}).WithTimeout(time.Minute).Should(Succeed())

		By("scaling the Balancer to 6 through its scale subresource: spot takes its maximum of 4, its node room for 3")
		start := time.Now()
		scaleBalancer(ns, "pools", 6)
		Eventually(func(g Gomega) {
			g.Expect(poolReplicas(g, ns, "pool-spot")).To(Equal(int32(4)))
			g.Expect(poolReplicas(g, ns, "pool-on-demand")).To(Equal(int32(2)), "what spot's maximum leaves")
		}).WithTimeout(balancerPeriod + 10*time.Second).Should(Succeed())
		Eventually(func(g Gomega) int {
			return readyPoolPods(g, ns, onDemand)
		}).WithTimeout(startupTimeout + 2*balancerPeriod + 30*time.Second).WithPolling(100 * time.Millisecond).Should(Equal(3))
		result.SecondsToSpotFallback = roundedSeconds(time.Since(start))
		Expect(time.Since(start)).To(BeNumerically(">=", startupTimeout-time.Second))
		Eventually(func(g Gomega) {
			b := getBalancer(g, ns, "pools")
			s := balancerTarget(b, "spot")
			g.Expect(s.Blocked).To(BeTrue())
			g.Expect(s.Ready).To(Equal(int32(3)))
			g.Expect(s.NotStarted).To(Equal(int32(1)))
			g.Expect(balancerTarget(b, "on-demand").Replacements).To(Equal(int32(1)))
			g.Expect(s.Reasons).To(ContainElement("max 4 reached"))
		}).WithTimeout(balancerPeriod + 10*time.Second).Should(Succeed())
		result.SpotPodsNotStarted = livePoolPods(Default, ns, spot) - readyPoolPods(Default, ns, spot)
		result.OnDemandWithReplacement = readyPoolPods(Default, ns, onDemand)
	})
})

func deploymentRef(name string) operatorv1alpha1.ScaleTargetReference {
	return operatorv1alpha1.ScaleTargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name}
}

func deploymentTarget(name, deployment string) operatorv1alpha1.BalancerTarget {
	return operatorv1alpha1.BalancerTarget{Name: name, ScaleTargetRef: deploymentRef(deployment)}
}

// poolDeployment makes a Deployment of 0 pods labelled app=<app> plus the node labels it is pinned to, tolerating
// the scenario's taint.
func poolDeployment(ns, name, app string, nodes map[string]string) {
	labels := poolLabels(nodes)
	labels["app"] = app
	labels["deployment"] = name
	Expect(k8sClient.Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](0),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"deployment": name}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{NodeSelector: nodes,
					Tolerations: []corev1.Toleration{{Key: "gnmic-e2e/balancer", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
					Containers:  []corev1.Container{{Name: "collector", Image: gnmic.DefaultImage}}}},
		}})).To(Succeed())
}

// poolLabels are the pod labels that say which zone or pool a pod runs in: where=<value of the node label>.
func poolLabels(nodes map[string]string) map[string]string {
	for _, v := range nodes {
		return map[string]string{"where": v}
	}
	return map[string]string{}
}

// balancerAutoscaler scales the Balancer to one pod per perPod Targets of the Cluster (targets_demand).
func balancerAutoscaler(ns, balancer, cluster string, perPod int64) *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: balancer},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "operator.gnmic.dev/v1alpha1", Kind: "Balancer", Name: balancer},
			MinReplicas:    ptr.To[int32](1),
			MaxReplicas:    10,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
				Metric: autoscalingv2.MetricIdentifier{Name: "targets_demand",
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"cluster": cluster}}},
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: resource.NewQuantity(perPod, resource.DecimalSI)},
			}}},
		},
	}
}

func patchPoolNode(name, patch string) {
	_, err := cp.Clientset.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	Expect(err).NotTo(HaveOccurred(), "patch node %s", name)
}

// scaleBalancer writes spec.replicas through the Balancer's scale subresource, as an HPA does.
func scaleBalancer(ns, name string, replicas int32) {
	dc, err := dynamic.NewForConfig(cp.Config)
	Expect(err).NotTo(HaveOccurred())
	balancers := operatorv1alpha1.GroupVersion.WithResource("balancers")
	_, err = dc.Resource(balancers).Namespace(ns).Patch(ctx, name, types.MergePatchType,
		[]byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas)), metav1.PatchOptions{}, "scale")
	Expect(err).NotTo(HaveOccurred())
}

func getBalancer(g Gomega, ns, name string) *operatorv1alpha1.Balancer {
	var b operatorv1alpha1.Balancer
	g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &b)).To(Succeed())
	return &b
}

func balancerReplicas(g Gomega, ns, name string) int32 {
	return ptr.Deref(getBalancer(g, ns, name).Spec.Replicas, 0)
}

func balancerTarget(b *operatorv1alpha1.Balancer, name string) operatorv1alpha1.BalancerTargetStatus {
	for _, t := range b.Status.Targets {
		if t.Name == name {
			return t
		}
	}
	return operatorv1alpha1.BalancerTargetStatus{}
}

func poolReplicas(g Gomega, ns, name string) int32 {
	var d appsv1.Deployment
	g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &d)).To(Succeed())
	return ptr.Deref(d.Spec.Replicas, 0)
}

// livePods counts the pods of a zone or pool that are not terminating; readyPods those of them that are Ready.
func livePoolPods(g Gomega, ns string, nodes map[string]string) int {
	live, _ := poolPods(g, ns, nodes)
	return live
}

func readyPoolPods(g Gomega, ns string, nodes map[string]string) int {
	_, ready := poolPods(g, ns, nodes)
	return ready
}

func poolPods(g Gomega, ns string, nodes map[string]string) (live, ready int) {
	var pods corev1.PodList
	g.Expect(k8sClient.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels(poolLabels(nodes)))).To(Succeed())
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		live++
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				ready++
			}
		}
	}
	return live, ready
}

func roundedSeconds(d time.Duration) float64 { return d.Round(100 * time.Millisecond).Seconds() }
