//go:build e2e

package olm_test

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

// olmResult is what test/e2e/results/olm.json holds.
type olmResult struct {
	AllNamespaces installFigures `json:"allNamespaces"`
	Upgrade       upgradeFigures `json:"upgrade"`
	OwnNamespace  installFigures `json:"ownNamespace"`
	// OutsideWatchAnswer is what the metrics API of the OwnNamespace install answers for a Cluster of a
	// namespace it does not watch.
	OutsideWatchAnswer string `json:"ownNamespaceMetricsAPIAnswerForAnotherNamespace"`
}

// upgradeFigures are what the upgrade measured, timed from the catalog's publication of the new bundle.
type upgradeFigures struct {
	From string `json:"from"`
	To   string `json:"to"`
	// SecondsToCatalogReady: the new catalog revision is served and catalog-operator reports it READY.
	SecondsToCatalogReady    float64 `json:"secondsToCatalogReady"`
	SecondsToNewCSVSucceeded float64 `json:"secondsToNewCSVSucceeded"`
	SecondsToOldCSVGone      float64 `json:"secondsToOldCSVGone"`
	// SecondsToAPIServicesReowned: the metrics APIServices are owned by the new CSV's bindings only.
	SecondsToAPIServicesReowned float64 `json:"secondsToAPIServicesOwnedByTheNewCSV"`
	// The external metrics API asked through kube-apiserver every 100 ms from the publication until the
	// APIServices were re-owned, and how many answers were errors (the first 20 with their time): none may be.
	MetricsRequests   int      `json:"metricsAPIRequests"`
	MetricsFailures   int      `json:"metricsAPIFailures"`
	MetricsFailureLog []string `json:"metricsAPIFailureLog"`
	// MetricsFailureCauses puts each failure, should there be one, down to its likely cause (see
	// failureCauses); PodTimeline shows, per operator pod, when its container started, it became Ready, its
	// metrics API listened and it was deleted.
	MetricsFailureCauses failureCauses `json:"metricsAPIFailureCauses"`
	PodTimeline          []string      `json:"podTimeline"`
	// APIServiceMissingSamples counts samples (one per APIService every 500 ms) that found one missing;
	// APIServiceOwners each change of their owners.
	APIServiceMissingSamples int      `json:"apiServiceMissingSamples"`
	APIServiceOwners         []string `json:"apiServiceOwnerChanges"`
	// The fake collectors sampled every 100 ms: most targets on two collectors at once, targets seen on
	// another pod than before the upgrade.
	CollectorSamples   int      `json:"collectorSamples"`
	MaxTargetsOnTwo    int      `json:"maxTargetsOnTwoCollectors"`
	TargetsOffTheirPod []string `json:"targetsSeenOffTheirPod"`
	// NewCSVPhases and OldCSVPhases are the phases (and reasons) each CSV went through.
	NewCSVPhases  []string `json:"newCSVPhases"`
	OldCSVPhases  []string `json:"oldCSVPhases"`
	LeaderBefore  string   `json:"leaderBefore"`
	LeaderAfter   string   `json:"leaderAfter"`
	BundleLookups int      `json:"installPlanBundleLookups"`
}

var _ = Describe("Operator Lifecycle Manager v0", Ordered, func() {
	var result olmResult
	const targets = 30
	AfterAll(func() { writeResult("olm", result) })

	Context("AllNamespaces: the global OperatorGroup of the operators namespace", Ordered, func() {
		ns := harness.OperatorsNamespace
		fleet := harness.Fleet{Namespace: "fleet-all", Cluster: "telemetry", Replicas: 2, PodCapacity: 20}

		It("installs 0.1.0 with Automatic approval: InstallPlan Complete, CSV Succeeded, from the catalog's inline manifests without an unpack Job", func() {
			all := &result.AllNamespaces
			*all = installFigures{Mode: "AllNamespaces", Namespace: ns, CSV: csvName("0.1.0"), Approval: string(operatorsv1alpha1.ApprovalAutomatic)}
			Expect(catalog.RenderedImages).To(HaveKeyWithValue(all.CSV, ""), "opm render of a bundle directory gives the bundle no image")
			start := time.Now()
			subscribe(ns, nil, nil, operatorsv1alpha1.ApprovalAutomatic, "")
			Expect(cp.RunOperatorDeployment(ctx, ns, deploymentName, harness.OperatorOptions{}, 5*time.Minute)).To(Succeed())
			waitForCSV(all, start)
			Expect(all.BundleLookups).To(BeZero(), "an InstallPlan with bundle lookups unpacks bundle images")
			Expect(all.Jobs).To(BeEmpty(), "no Job (bundle unpack) may run")
			checkRunsAsOLMSays(ns, harness.GlobalOperatorGroup, "")
			checkAPIServicesOwnedBy(ns, all.CSV)
			logBundleClusterRoles()
		})

		It("runs a Cluster under the RBAC OLM granted: 30 targets placed on 2 collectors, the HPA reads unassigned_targets through the APIService", func() {
			result.AllNamespaces.Targets = targets
			result.AllNamespaces.SecondsToClusterPlaced = createFleet(fleet, targets)
			checkMetricsAndHPA(fleet, targets)
		})

		It("upgrades to 0.1.1 once the catalog publishes it: placement survives, nothing is collected twice, the metrics API keeps answering", func() {
			up := &result.Upgrade
			*up = upgradeFigures{From: csvName("0.1.0"), To: csvName("0.1.1")}
			original := placement(fleet.Namespace)
			Expect(original).To(HaveLen(targets))
			Expect(statusPlacement(Default, fleet)).To(Equal(original), "the Targets' statuses name the pods whose collectors hold them")
			oldPods := map[string]bool{}
			for _, r := range cp.OperatorReplicas() {
				oldPods[r.Pod] = true
			}
			oldBindings := csvBindings(ns, up.From)
			up.LeaderBefore = leaderOf(ns)
			monitor := monitorUpgrade(fleet, ns, original)
			stopped := false
			defer func() {
				if !stopped {
					monitor.Stop()
				}
			}()

			start := time.Now()
			By("publishing 0.1.1, which replaces 0.1.0, in the catalog's channel")
			Expect(catalog.Publish(ctx, harness.CatalogBundle{Dir: upgrade, Replaces: up.From})).To(Succeed())
			up.SecondsToCatalogReady = seconds(time.Since(start))
			Eventually(func(g Gomega) {
				phase := csvPhase(g, ns, up.To)
				g.Expect(phase).NotTo(Equal(operatorsv1alpha1.CSVPhaseFailed))
				g.Expect(phase).To(Equal(operatorsv1alpha1.CSVPhaseSucceeded))
			}).WithTimeout(6 * time.Minute).Should(Succeed())
			up.SecondsToNewCSVSucceeded = seconds(time.Since(start))
			newCSV := &operatorsv1alpha1.ClusterServiceVersion{}
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: up.To}, newCSV)).To(Succeed())
			Expect(newCSV.Spec.Replaces).To(Equal(up.From), "OLM writes the channel's upgrade edge into the new CSV")
			Eventually(func(g Gomega) {
				g.Expect(csvPhase(g, ns, up.From)).To(BeEmpty(), "the replaced CSV is deleted")
			}).WithTimeout(3 * time.Minute).Should(Succeed())
			up.SecondsToOldCSVGone = seconds(time.Since(start))
			Eventually(func(g Gomega) {
				for _, b := range oldBindings {
					_, err := cp.Clientset.RbacV1().ClusterRoleBindings().Get(ctx, b.Name, metav1.GetOptions{})
					g.Expect(err).To(HaveOccurred(), "ClusterRoleBinding %s of %s is still there", b.Name, up.From)
				}
			}).WithTimeout(2 * time.Minute).Should(Succeed())
			Expect(cp.WaitForOperator(ctx)).To(Succeed())
			Eventually(func(g Gomega) {
				replicas := cp.OperatorReplicas()
				g.Expect(replicas).To(HaveLen(2))
				for _, r := range replicas {
					g.Expect(oldPods).NotTo(HaveKey(r.Pod), "pod %s is from before the upgrade", r.Pod)
					g.Expect(r.Ready).To(BeTrue())
				}
			}).WithTimeout(2 * time.Minute).Should(Succeed())
			checkAPIServicesOwnedBy(ns, up.To)
			up.SecondsToAPIServicesReowned = seconds(time.Since(start))
			// A few more samples once every owner of before is gone: the garbage collector acts on the old
			// bindings' deletion within seconds.
			time.Sleep(5 * time.Second)
			monitor.Stop()
			stopped = true

			monitor.mu.Lock()
			up.MetricsRequests, up.MetricsFailures, up.MetricsFailureLog = monitor.Requests, monitor.Failures, monitor.FailureLog
			up.APIServiceMissingSamples, up.APIServiceOwners = monitor.MissingAPIService, monitor.OwnerChanges
			up.CollectorSamples, up.MaxTargetsOnTwo = monitor.Samples, monitor.MaxOnTwo
			monitor.mu.Unlock()
			up.TargetsOffTheirPod = monitor.strays()
			up.MetricsFailureCauses, up.PodTimeline = monitor.causes(), monitor.podTimeline()
			up.LeaderAfter = leaderOf(ns)
			up.NewCSVPhases, up.OldCSVPhases = csvPhases(ns, up.To), csvPhases(ns, up.From)
			plans, err := olm.InstallPlanFor(ctx, ns, up.To)
			Expect(err).NotTo(HaveOccurred())
			Expect(plans).NotTo(BeEmpty())
			up.BundleLookups = len(plans[0].Status.BundleLookups)
			fmt.Fprintf(GinkgoWriter, "upgrade %s → %s: catalog READY after %.1fs, new CSV Succeeded after %.1fs, old CSV gone after %.1fs, "+
				"APIServices re-owned after %.1fs; metrics API %d/%d requests failed (causes %+v); APIServices missing in %d samples; "+
				"at most %d targets on two collectors, %d off their pod; leader %s → %s\n",
				up.From, up.To, up.SecondsToCatalogReady, up.SecondsToNewCSVSucceeded, up.SecondsToOldCSVGone, up.SecondsToAPIServicesReowned,
				up.MetricsFailures, up.MetricsRequests, up.MetricsFailureCauses, up.APIServiceMissingSamples, up.MaxTargetsOnTwo,
				len(up.TargetsOffTheirPod), up.LeaderBefore, up.LeaderAfter)
			for _, line := range up.PodTimeline {
				fmt.Fprintf(GinkgoWriter, "  %s\n", line)
			}

			Expect(up.BundleLookups).To(BeZero())
			Expect(watch.Jobs()).To(BeEmpty())
			sub := &operatorsv1alpha1.Subscription{}
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: packageName}, sub)).To(Succeed())
			Expect(sub.Status.InstalledCSV).To(Equal(up.To))
			Expect(string(sub.Status.State)).To(Equal(operatorsv1alpha1.SubscriptionStateAtLatest))
			checkRunsAsOLMSays(ns, harness.GlobalOperatorGroup, "")
			checkOperatorHealthy()

			Expect(up.MaxTargetsOnTwo).To(BeZero(), "no target may be collected by two collectors")
			Expect(up.TargetsOffTheirPod).To(BeEmpty(), "no target may move")
			Expect(placement(fleet.Namespace)).To(Equal(original), "every target stays on its collector")
			Eventually(func(g Gomega) {
				g.Expect(statusPlacement(g, fleet)).To(Equal(original), "every Target's status names its pod, Assigned and collecting")
				s, err := fleet.Observe(ctx, cp, k8sClient, "")
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(s.ReadyReplicas).To(Equal(fleet.Replicas))
				g.Expect(s.Unassigned).To(BeZero())
			}).WithTimeout(time.Minute).Should(Succeed())
			Expect(up.LeaderAfter).NotTo(BeEmpty())
			Expect(oldPods).NotTo(HaveKey(up.LeaderAfter), "the leader is a pod of the new version")
			Expect(up.APIServiceMissingSamples).To(BeZero(), "the metrics APIServices must outlive the old version's bindings")
			// No pod was Ready before its container ran, as with a kubelet: a rolling update deletes an old pod
			// only once its replacement passed its readiness probe.
			Expect(monitor.readyWithoutProcess()).To(BeEmpty(), "pods %v", up.PodTimeline)
			// No request may fail: a new pod is Ready only once its metrics API serves, and an old one keeps
			// serving for its drain after SIGTERM, until kube-apiserver has seen its endpoint terminating.
			Expect(up.MetricsRequests).To(BeNumerically(">", 0))
			Expect(up.MetricsFailures).To(BeZero(), "the metrics API must answer throughout the upgrade: failures %v (likely causes %+v), pods %v",
				up.MetricsFailureLog, up.MetricsFailureCauses, up.PodTimeline)
		})

		It("uninstalls: deleting the Subscription and the CSV removes the Deployment, the operator's RBAC and its APIServices; CRDs and Clusters stay", func() {
			u := installFigures{Namespace: ns, CSV: csvName("0.1.1")}
			uninstall(&u, fleet.Namespace)
			result.AllNamespaces.UninstallSeconds, result.AllNamespaces.LeftAfterUninstall = u.UninstallSeconds, u.LeftAfterUninstall
		})
	})

	Context("OwnNamespace: an OperatorGroup that targets the install namespace", Ordered, func() {
		ns := "gnmic-own"
		fleet := harness.Fleet{Namespace: ns, Cluster: "telemetry", Replicas: 2, PodCapacity: 20}

		It("installs the channel head, 0.1.1, with Manual approval over the CRDs the first install left", func() {
			own := &result.OwnNamespace
			*own = installFigures{Mode: "OwnNamespace", Namespace: ns, CSV: csvName("0.1.1"), Approval: string(operatorsv1alpha1.ApprovalManual)}
			subscribe(ns, &metav1.ObjectMeta{Namespace: ns, Name: "gnmic-operator"}, []string{ns}, operatorsv1alpha1.ApprovalManual, "")
			plan := installPlanOf(ns, own.CSV, 3*time.Minute)
			Eventually(func(g Gomega) {
				plans, err := olm.InstallPlanFor(ctx, ns, own.CSV)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(plans[0].Status.Phase).To(Equal(operatorsv1alpha1.InstallPlanPhaseRequiresApproval))
			}).WithTimeout(2 * time.Minute).Should(Succeed())
			Expect(csvPhase(Default, ns, own.CSV)).To(BeEmpty(), "nothing is installed before the approval")

			start := time.Now()
			Expect(olm.ApproveInstallPlan(ctx, ns, plan.Name)).To(Succeed())
			Expect(cp.RunOperatorDeployment(ctx, ns, deploymentName, harness.OperatorOptions{}, 5*time.Minute)).To(Succeed())
			waitForCSV(own, start)
			Expect(own.BundleLookups).To(BeZero())
			Expect(own.Jobs).To(BeEmpty())
			checkRunsAsOLMSays(ns, "gnmic-operator", ns)
			checkAPIServicesOwnedBy(ns, own.CSV)
		})

		It("runs a Cluster of its namespace (HPA through the APIService) and leaves other namespaces' Targets alone", func() {
			result.OwnNamespace.Targets = targets
			result.OwnNamespace.SecondsToClusterPlaced = createFleet(fleet, targets)
			checkMetricsAndHPA(fleet, targets)

			By("a Target created in the namespace of the first install's Cluster gets no placement: that namespace is not watched")
			other := harness.Fleet{Namespace: "fleet-all", Cluster: "telemetry"}
			Expect(other.AddTargets(ctx, k8sClient, 500, 501)).To(Succeed())
			Consistently(func(g Gomega) {
				t := &operatorv1alpha1.Target{}
				g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: other.Namespace, Name: harness.TargetName(500)}, t)).To(Succeed())
				g.Expect(t.Status.ClusterStates).To(BeEmpty())
			}).WithTimeout(15 * time.Second).WithPolling(time.Second).Should(Succeed())
			By("the metrics API, cluster-wide, answers for a Cluster of a namespace the operator does not watch")
			_, err := externalMetric(ctx, other.Namespace, "unassigned_targets", other.Cluster)
			Expect(err).To(HaveOccurred(), "an operator that does not watch %s cannot know its Clusters", other.Namespace)
			result.OutsideWatchAnswer = err.Error()
			fmt.Fprintf(GinkgoWriter, "unassigned_targets of %s/%s from the OwnNamespace install: %v\n", other.Namespace, other.Cluster, err)
			for pod, held := range collectors.Targets(other.Namespace) {
				Expect(held).NotTo(ContainElement(harness.TargetName(500)), "the collector of %s was sent a Target of an unwatched namespace", pod)
			}
		})

		It("uninstalls without leftovers", func() {
			uninstall(&result.OwnNamespace, ns, "fleet-all")
		})
	})
})
