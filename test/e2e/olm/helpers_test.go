//go:build e2e

package olm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	externalmetrics "k8s.io/metrics/pkg/apis/external_metrics/v1beta1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

const (
	packageName = "gnmic-operator"
	channel     = "alpha"
	// deploymentName is the CSV's Deployment.
	deploymentName = "gnmic-operator-controller-manager"
	// serviceAccount is the one the CSV's install strategy runs the operator as.
	serviceAccount = "gnmic-operator-controller-manager"
)

var (
	apiServices = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	// metricsAPIServices are the APIServices the operator registers at run time.
	metricsAPIServices = []string{"v1beta1.custom.metrics.k8s.io", "v1beta2.custom.metrics.k8s.io", "v1beta1.external.metrics.k8s.io"}
)

// csvName is the ClusterServiceVersion of a bundle version.
func csvName(version string) string { return packageName + ".v" + version }

// installFigures are what one install through OLM measured.
type installFigures struct {
	Mode      string `json:"installMode"`
	Namespace string `json:"namespace"`
	CSV       string `json:"csv"`
	Approval  string `json:"installPlanApproval"`
	// SecondsToInstallPlanComplete, SecondsToMetricsAPIs and SecondsToCSVSucceeded run from the
	// Subscription's creation (with Manual approval, from the approval) to the InstallPlan's phase
	// Complete, the operator's replicas ready with both metrics APIServices Available, and then the CSV's
	// phase Succeeded.
	SecondsToInstallPlanComplete float64 `json:"secondsToInstallPlanComplete"`
	SecondsToMetricsAPIs         float64 `json:"secondsToOperatorReadyAndMetricsAPIsAvailable"`
	SecondsToCSVSucceeded        float64 `json:"secondsToCSVSucceeded"`
	// CSVPhases is every phase (and reason) the CSV went through until then.
	CSVPhases []string `json:"csvPhases"`
	// SecondsToClusterPlaced runs from the Cluster's creation until every target is on one collector,
	// every pod is Ready and nothing is unassigned.
	SecondsToClusterPlaced float64 `json:"secondsToClusterPlaced"`
	Targets                int     `json:"targets"`
	// UninstallSeconds runs from deleting the Subscription and CSV until the Deployment, the operator's
	// RBAC, ServiceAccount, Services and APIServices are all gone.
	UninstallSeconds float64 `json:"uninstallSeconds"`
	// LeftAfterUninstall is what of the install stays by OLM's rules (reported, not a failure).
	LeftAfterUninstall []string `json:"leftAfterUninstall"`
	// BundleLookups and Jobs prove that nothing was unpacked: the InstallPlan's bundle lookups, and every
	// Job created in the cluster during the install.
	BundleLookups int      `json:"installPlanBundleLookups"`
	Jobs          []string `json:"jobsCreated"`
}

// subscribe creates an OperatorGroup (unless og is nil) and a Subscription to the catalog's channel in
// namespace.
func subscribe(namespace string, og *metav1.ObjectMeta, targetNamespaces []string, approval operatorsv1alpha1.Approval, startingCSV string) *operatorsv1alpha1.Subscription {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if err := k8sClient.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
	if og != nil {
		group := &operatorsv1.OperatorGroup{ObjectMeta: *og}
		group.Spec.TargetNamespaces = targetNamespaces
		Expect(k8sClient.Create(ctx, group)).To(Succeed())
	}
	sub := &operatorsv1alpha1.Subscription{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: packageName},
		Spec: &operatorsv1alpha1.SubscriptionSpec{
			CatalogSource: catalog.Name, CatalogSourceNamespace: harness.OLMNamespace,
			Package: packageName, Channel: channel, InstallPlanApproval: approval, StartingCSV: startingCSV,
		},
	}
	Expect(k8sClient.Create(ctx, sub)).To(Succeed())
	return sub
}

// csvPhase is the phase of a CSV, "" when it does not exist.
func csvPhase(g Gomega, namespace, name string) operatorsv1alpha1.ClusterServiceVersionPhase {
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	err := k8sClient.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, csv)
	if apierrors.IsNotFound(err) {
		return ""
	}
	g.Expect(err).NotTo(HaveOccurred())
	return csv.Status.Phase
}

// installPlanOf waits for the InstallPlan of namespace that installs csv and returns it.
func installPlanOf(namespace, csv string, timeout time.Duration) *operatorsv1alpha1.InstallPlan {
	var plan *operatorsv1alpha1.InstallPlan
	Eventually(func(g Gomega) {
		plans, err := olm.InstallPlanFor(ctx, namespace, csv)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(plans).NotTo(BeEmpty(), "no InstallPlan for %s yet", csv)
		plan = &plans[0]
	}).WithTimeout(timeout).Should(Succeed())
	return plan
}

// waitForCSV waits for the InstallPlan that installs csv to be Complete, the operator's replicas to run
// ready containers (the pod emulator's readiness probes), the metrics APIServices to be Available and the
// CSV to be Succeeded, and fills in the figures, timed from start.
func waitForCSV(figures *installFigures, start time.Time) {
	By("waiting for the InstallPlan to complete")
	Eventually(func(g Gomega) {
		plans, err := olm.InstallPlanFor(ctx, figures.Namespace, figures.CSV)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(plans).NotTo(BeEmpty())
		g.Expect(plans[0].Status.Phase).NotTo(Equal(operatorsv1alpha1.InstallPlanPhaseFailed), "InstallPlan %s failed: %s", plans[0].Name, plans[0].Status.Message)
		g.Expect(plans[0].Status.Phase).To(Equal(operatorsv1alpha1.InstallPlanPhaseComplete))
		figures.BundleLookups = len(plans[0].Status.BundleLookups)
	}).WithTimeout(5 * time.Minute).Should(Succeed())
	figures.SecondsToInstallPlanComplete = seconds(time.Since(start))
	By("waiting for the operator's pods, run by the pod emulator, to pass their readiness probes and serve the metrics APIs")
	Expect(cp.WaitForOperator(ctx)).To(Succeed())
	figures.SecondsToMetricsAPIs = seconds(time.Since(start))
	By("waiting for the CSV to succeed")
	Eventually(func(g Gomega) {
		g.Expect(csvPhase(g, figures.Namespace, figures.CSV)).To(Equal(operatorsv1alpha1.CSVPhaseSucceeded))
	}).WithTimeout(5 * time.Minute).Should(Succeed())
	figures.SecondsToCSVSucceeded = seconds(time.Since(start))
	figures.Jobs = watch.Jobs()
	figures.CSVPhases = csvPhases(figures.Namespace, figures.CSV)
	fmt.Fprintf(GinkgoWriter, "%s installed in %s: InstallPlan Complete after %.1fs, operator ready and metrics APIs available after %.1fs, "+
		"CSV Succeeded after %.1fs; the CSV went %v\n", figures.CSV, figures.Namespace, figures.SecondsToInstallPlanComplete,
		figures.SecondsToMetricsAPIs, figures.SecondsToCSVSucceeded, figures.CSVPhases)
}

// csvPhases is the sequence of phases (with reasons) the watch saw a CSV go through.
func csvPhases(namespace, name string) []string {
	var out []string
	for _, p := range watch.Phases() {
		if p.Kind != "ClusterServiceVersion" || p.Object != namespace+"/"+name {
			continue
		}
		phase := p.Phase
		if _, reason, ok := strings.Cut(p.Detail, "reason="); ok {
			reason, _, _ = strings.Cut(reason, " ")
			phase += "/" + reason
		}
		if len(out) == 0 || out[len(out)-1] != phase {
			out = append(out, phase)
		}
	}
	return out
}

// checkRunsAsOLMSays checks the operator's containers: each runs with --watch-namespace resolved from the
// pod's olm.targetNamespaces annotation through WATCH_NAMESPACE, in the install namespace, and the pods
// carry the annotations OLM writes for the OperatorGroup.
func checkRunsAsOLMSays(namespace, operatorGroup, targetNamespaces string) {
	replicas := cp.OperatorReplicas()
	Expect(replicas).To(HaveLen(2), "the CSV's Deployment asks for 2 replicas")
	for _, r := range replicas {
		pod, err := cp.Clientset.CoreV1().Pods(namespace).Get(ctx, r.Pod, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(pod.Annotations).To(HaveKeyWithValue("olm.targetNamespaces", targetNamespaces))
		Expect(pod.Annotations).To(HaveKeyWithValue("olm.operatorGroup", operatorGroup))
		Expect(pod.Annotations).To(HaveKeyWithValue("olm.operatorNamespace", namespace))
		Expect(pod.Spec.ServiceAccountName).To(Equal(serviceAccount))
		argv, err := harness.ProcessArgv(r.PID)
		Expect(err).NotTo(HaveOccurred())
		Expect(argv).To(ContainElement("--watch-namespace="+targetNamespaces), "pod %s runs %q", r.Pod, argv)
		env, err := harness.ProcessEnv(r.PID)
		Expect(err).NotTo(HaveOccurred())
		Expect(env).To(HaveKeyWithValue("WATCH_NAMESPACE", targetNamespaces))
		Expect(env).To(HaveKeyWithValue("POD_NAMESPACE", namespace))
		fmt.Fprintf(GinkgoWriter, "operator pod %s (pid %d): WATCH_NAMESPACE=%q, %v\n", r.Pod, r.PID, env["WATCH_NAMESPACE"], argv)
	}
}

// csvBindings are the ClusterRoleBindings OLM made for csv (label olm.owner), by name.
func csvBindings(namespace, csv string) []rbacv1.ClusterRoleBinding {
	list, err := cp.Clientset.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{
		LabelSelector: "olm.owner=" + csv + ",olm.owner.namespace=" + namespace})
	Expect(err).NotTo(HaveOccurred())
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	return list.Items
}

// apiServiceOwners maps each metrics APIService to the names of its owners; a missing one maps to nil.
func apiServiceOwners(c context.Context) (map[string][]string, error) {
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, name := range metricsAPIServices {
		u, err := dyn.Resource(apiServices).Get(c, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			out[name] = nil
			continue
		}
		if err != nil {
			return nil, err
		}
		owners := []string{}
		for _, ref := range u.GetOwnerReferences() {
			owners = append(owners, ref.Kind+"/"+ref.Name)
		}
		sort.Strings(owners)
		out[name] = owners
	}
	return out, nil
}

// checkAPIServicesOwnedBy checks that every metrics APIService is owned by exactly the ClusterRoleBindings
// of csv that bind the operator's ServiceAccount.
func checkAPIServicesOwnedBy(namespace, csv string) {
	var want []string
	for _, b := range csvBindings(namespace, csv) {
		for _, s := range b.Subjects {
			if s.Kind == rbacv1.ServiceAccountKind && s.Name == serviceAccount && s.Namespace == namespace {
				want = append(want, "ClusterRoleBinding/"+b.Name)
				break
			}
		}
	}
	sort.Strings(want)
	Expect(want).NotTo(BeEmpty(), "OLM made no ClusterRoleBinding for %s's ServiceAccount", csv)
	Eventually(func(g Gomega) {
		owners, err := apiServiceOwners(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		for name, o := range owners {
			g.Expect(o).To(Equal(want), "owners of APIService %s", name)
		}
	}).WithTimeout(2 * time.Minute).Should(Succeed())
	fmt.Fprintf(GinkgoWriter, "metrics APIServices owned by %s's ClusterRoleBindings %v\n", csv, want)
}

// externalMetric asks kube-apiserver for an external metric of the Clusters cluster=<name> selects in
// namespace, through the APIService and the operator's Service, as the autoscaler does.
func externalMetric(c context.Context, namespace, metric, cluster string) (int64, error) {
	return askExternalMetric(c, namespace, metric, cluster, -1)
}

// externalMetricOnce is externalMetric without client-go's retries (of a GET whose connection broke, or that
// was answered Retry-After): one request, one answer.
func externalMetricOnce(c context.Context, namespace, metric, cluster string) (int64, error) {
	return askExternalMetric(c, namespace, metric, cluster, 0)
}

// askExternalMetric asks with at most retries retries, client-go's default when negative.
func askExternalMetric(c context.Context, namespace, metric, cluster string, retries int) (int64, error) {
	req := cp.Clientset.Discovery().RESTClient().Get().
		AbsPath("/apis/external.metrics.k8s.io/v1beta1/namespaces", namespace, metric).
		Param("labelSelector", "cluster="+cluster)
	if retries >= 0 {
		req = req.MaxRetries(retries)
	}
	body, err := req.DoRaw(c)
	if err != nil {
		return 0, err
	}
	var list externalmetrics.ExternalMetricValueList
	if err := json.Unmarshal(body, &list); err != nil {
		return 0, fmt.Errorf("decode %s: %w", body, err)
	}
	if len(list.Items) != 1 {
		return 0, fmt.Errorf("want one value of %s, got %s", metric, body)
	}
	return list.Items[0].Value.Value(), nil
}

// expectPlaced waits until every pod of the fleet is Ready, nothing is unassigned, each target is on exactly
// one fake collector and every Target's status says Assigned and collecting.
func expectPlaced(f harness.Fleet, targets int) {
	Eventually(func(g Gomega) {
		s, err := f.Observe(ctx, cp, k8sClient, "")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(s.ReadyReplicas).To(Equal(f.Replicas))
		g.Expect(s.Unassigned).To(BeZero())
		g.Expect(placement(f.Namespace)).To(HaveLen(targets))
		g.Expect(statusPlacement(g, f)).To(HaveLen(targets))
	}).WithTimeout(4 * time.Minute).Should(Succeed())
}

// placement maps each target that exactly one fake collector of the namespace holds to its pod.
func placement(namespace string) map[string]string {
	held := map[string][]string{}
	for pod, targets := range collectors.Targets(namespace) {
		for _, t := range targets {
			held[t] = append(held[t], pod)
		}
	}
	out := map[string]string{}
	for t, pods := range held {
		if len(pods) == 1 {
			out[t] = pods[0]
		}
	}
	return out
}

// statusPlacement maps each Target whose status says Assigned and collecting in the fleet's Cluster to the
// pod its status names.
func statusPlacement(g Gomega, f harness.Fleet) map[string]string {
	var list operatorv1alpha1.TargetList
	g.Expect(k8sClient.List(ctx, &list, client.InNamespace(f.Namespace))).To(Succeed())
	out := map[string]string{}
	for _, t := range list.Items {
		st := t.Status.ClusterStates[f.Cluster]
		if st.State == operatorv1alpha1.TargetAssigned && st.Collecting && st.Pod != "" {
			out[t.Name] = st.Pod
		}
	}
	return out
}

// createFleet creates the fleet with targets, waits until they are placed, and returns the seconds it took.
func createFleet(f harness.Fleet, targets int) float64 {
	start := time.Now()
	Expect(f.Create(ctx, cp, k8sClient)).To(Succeed())
	Expect(f.AddTargets(ctx, k8sClient, 0, targets)).To(Succeed())
	expectPlaced(f, targets)
	took := seconds(time.Since(start))
	fmt.Fprintf(GinkgoWriter, "Cluster %s/%s: %d targets placed on %d pods %.1fs after it was created\n", f.Namespace, f.Cluster, targets, f.Replicas, took)
	return took
}

// checkMetricsAndHPA reads unassigned_targets and targets_demand through kube-apiserver and has an HPA
// (minReplicas = maxReplicas = the fleet's, so that it changes nothing) read both through
// kube-controller-manager's autoscaler.
func checkMetricsAndHPA(f harness.Fleet, targets int) {
	Eventually(func(g Gomega) {
		unassigned, err := externalMetric(ctx, f.Namespace, "unassigned_targets", f.Cluster)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(unassigned).To(BeZero())
		demand, err := externalMetric(ctx, f.Namespace, "targets_demand", f.Cluster)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(demand).To(Equal(int64(targets)))
	}).WithTimeout(time.Minute).Should(Succeed())

	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"cluster": f.Cluster}}
	hpa := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.Namespace, Name: f.Cluster},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "operator.gnmic.dev/v1alpha1", Kind: "Cluster", Name: f.Cluster},
			MinReplicas:    ptr.To(f.Replicas), MaxReplicas: f.Replicas,
			Metrics: []autoscalingv2.MetricSpec{
				{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
					Metric: autoscalingv2.MetricIdentifier{Name: "targets_demand", Selector: selector},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: resource.NewQuantity(int64(f.PodCapacity), resource.DecimalSI)},
				}},
				{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
					Metric: autoscalingv2.MetricIdentifier{Name: "unassigned_targets", Selector: selector},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: resource.NewQuantity(1, resource.DecimalSI)},
				}},
			},
		},
	}
	Expect(k8sClient.Create(ctx, hpa)).To(Succeed())
	Eventually(func(g Gomega) {
		h, err := cp.Clientset.AutoscalingV2().HorizontalPodAutoscalers(f.Namespace).Get(ctx, f.Cluster, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		active := false
		for _, c := range h.Status.Conditions {
			if c.Type == autoscalingv2.ScalingActive {
				g.Expect(c.Status).To(Equal(corev1.ConditionTrue), "ScalingActive: %s: %s", c.Reason, c.Message)
				active = true
			}
		}
		g.Expect(active).To(BeTrue(), "no ScalingActive condition yet")
		read := map[string]int64{}
		for _, m := range h.Status.CurrentMetrics {
			if m.External != nil {
				if m.External.Current.Value != nil {
					read[m.External.Metric.Name] = m.External.Current.Value.Value()
				}
				if m.External.Current.AverageValue != nil {
					read[m.External.Metric.Name] = m.External.Current.AverageValue.Value()
				}
			}
		}
		g.Expect(read).To(HaveKeyWithValue("unassigned_targets", int64(0)))
		g.Expect(read).To(HaveKey("targets_demand"))
		fmt.Fprintf(GinkgoWriter, "HPA %s/%s reads %v (desired %d)\n", f.Namespace, f.Cluster, read, h.Status.DesiredReplicas)
	}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
}

// uninstall deletes the Subscription and the CSV as docs/olm.md tells users, waits until OLM and the
// garbage collector removed the operator's Deployment, pods, ServiceAccount, RBAC, Services and its
// runtime-created APIServices, and checks that the CRDs and the users' objects stay and discovery works.
func uninstall(figures *installFigures, userNamespaces ...string) {
	ns, csv := figures.Namespace, figures.CSV
	Expect(csvPhase(Default, ns, csv)).To(Equal(operatorsv1alpha1.CSVPhaseSucceeded), "the CSV stayed Succeeded until the uninstall")
	checkOperatorHealthy()
	bindings := csvBindings(ns, csv)
	Expect(bindings).NotTo(BeEmpty())
	var names []string
	for _, b := range bindings {
		names = append(names, b.Name)
	}
	fmt.Fprintf(GinkgoWriter, "uninstalling %s from %s: its ClusterRoleBindings %v\n", csv, ns, names)
	users := map[string]int{}
	for _, n := range userNamespaces {
		users[n] = countUserObjects(n)
	}

	start := time.Now()
	Expect(k8sClient.Delete(ctx, &operatorsv1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: packageName}})).To(Succeed())
	Expect(k8sClient.Delete(ctx, &operatorsv1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: csv}})).To(Succeed())
	var left []string
	Eventually(func(g Gomega) {
		left = installLeftovers(g, ns, csv)
		g.Expect(left).To(BeEmpty())
	}).WithTimeout(3*time.Minute).WithPolling(250*time.Millisecond).Should(Succeed(), func() string {
		return fmt.Sprintf("%s after deleting the Subscription and CSV, left: %v", time.Since(start).Round(time.Second), left)
	})
	figures.UninstallSeconds = seconds(time.Since(start))
	fmt.Fprintf(GinkgoWriter, "%s uninstalled from %s in %.1fs: Deployment, pods, ServiceAccount, RBAC, Services and APIServices gone\n", csv, ns, figures.UninstallSeconds)
	Eventually(func() []harness.Replica { return cp.OperatorReplicas() }).WithTimeout(time.Minute).Should(BeEmpty(), "every operator container stopped")
	cp.StopOperatorEmulator()

	By("the CRDs and the users' objects stay, discovery is healthy")
	for _, crd := range bundleCRDs() {
		_, err := cp.Kubectl(ctx, "get", "crd", crd)
		Expect(err).NotTo(HaveOccurred(), "CRD %s must stay", crd)
	}
	for n, count := range users {
		Expect(countUserObjects(n)).To(Equal(count), "the users' objects of namespace %s", n)
	}
	out, err := cp.Kubectl(ctx, "api-resources")
	Expect(err).NotTo(HaveOccurred(), "kubectl api-resources after the uninstall: %s", out)
	figures.LeftAfterUninstall = notRemoved(ns)
	fmt.Fprintf(GinkgoWriter, "left after the uninstall (OLM removes neither): %v\n", figures.LeftAfterUninstall)
}

// checkOperatorHealthy checks that no operator container restarted and that none logged a kind its
// cache could not find: the bundle's CRDs must be those the binary watches. (A missing CRD only stops the
// operator once its cache gives up waiting, after two minutes; the log says so at once.)
func checkOperatorHealthy() {
	replicas := cp.OperatorReplicas()
	Expect(replicas).NotTo(BeEmpty())
	for _, r := range replicas {
		Expect(r.Restarts).To(BeZero(), "operator pod %s restarted", r.Pod)
		log, err := os.ReadFile(filepath.Join(cp.Dir, "logs", r.Pod+".log"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(log)).NotTo(ContainSubstring("no matches for kind"), "operator pod %s watches a kind the bundle does not install", r.Pod)
	}
}

// countUserObjects counts the operator kinds' objects of namespace.
func countUserObjects(namespace string) int {
	n := 0
	for _, crd := range bundleCRDs() {
		out, err := cp.Kubectl(ctx, "get", crd, "-n", namespace, "-o", "name")
		Expect(err).NotTo(HaveOccurred(), "%s", out)
		n += len(strings.Fields(string(out)))
	}
	return n
}

// installLeftovers lists what of the operator's install is still there.
func installLeftovers(g Gomega, namespace, csv string) []string {
	var left []string
	if _, err := cp.Clientset.AppsV1().Deployments(namespace).Get(ctx, deploymentName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		left = append(left, "Deployment/"+deploymentName)
	}
	pods, err := cp.Clientset.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "control-plane=controller-manager"})
	g.Expect(err).NotTo(HaveOccurred())
	for _, p := range pods.Items {
		left = append(left, "Pod/"+p.Name)
	}
	if _, err := cp.Clientset.CoreV1().ServiceAccounts(namespace).Get(ctx, serviceAccount, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		left = append(left, "ServiceAccount/"+serviceAccount)
	}
	for _, svc := range []string{harness.MetricsAPIService, "gnmic-operator-controller-manager-metrics-service"} {
		if _, err := cp.Clientset.CoreV1().Services(namespace).Get(ctx, svc, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			left = append(left, "Service/"+svc)
		}
	}
	owned := "olm.owner=" + csv + ",olm.owner.namespace=" + namespace
	crbs, err := cp.Clientset.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	for _, b := range crbs.Items {
		for _, s := range b.Subjects {
			if s.Kind == rbacv1.ServiceAccountKind && s.Namespace == namespace && s.Name == serviceAccount {
				left = append(left, "ClusterRoleBinding/"+b.Name)
				break
			}
		}
	}
	crs, err := cp.Clientset.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{LabelSelector: owned})
	g.Expect(err).NotTo(HaveOccurred())
	for _, r := range crs.Items {
		left = append(left, "ClusterRole/"+r.Name)
	}
	rbs, err := cp.Clientset.RbacV1().RoleBindings(namespace).List(ctx, metav1.ListOptions{LabelSelector: owned})
	g.Expect(err).NotTo(HaveOccurred())
	for _, b := range rbs.Items {
		left = append(left, "RoleBinding/"+b.Name)
	}
	roles, err := cp.Clientset.RbacV1().Roles(namespace).List(ctx, metav1.ListOptions{LabelSelector: owned})
	g.Expect(err).NotTo(HaveOccurred())
	for _, r := range roles.Items {
		left = append(left, "Role/"+r.Name)
	}
	owners, err := apiServiceOwners(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	for _, name := range metricsAPIServices {
		if owners[name] != nil {
			left = append(left, "APIService/"+name)
		}
	}
	return left
}

// notRemoved lists what stays after an uninstall without being part of what the assertions require gone:
// the bundle's own ClusterRoles (created by the InstallPlan from the bundle's manifests), and the objects
// the operator made at run time in its namespace (the metrics API's certificate Secret, the leader Lease).
func notRemoved(namespace string) []string {
	var left []string
	for _, name := range bundleClusterRoles() {
		if r, err := cp.Clientset.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{}); err == nil {
			left = append(left, fmt.Sprintf("ClusterRole/%s (labels %v)", name, r.Labels))
		}
	}
	for _, secret := range []string{harness.MetricsAPIService + "-cert", "gnmic-operator-targetsource-push-cert"} {
		if _, err := cp.Clientset.CoreV1().Secrets(namespace).Get(ctx, secret, metav1.GetOptions{}); err == nil {
			left = append(left, "Secret/"+namespace+"/"+secret)
		}
	}
	if _, err := cp.Clientset.CoordinationV1().Leases(namespace).Get(ctx, harness.OperatorLeaseName, metav1.GetOptions{}); err == nil {
		left = append(left, "Lease/"+namespace+"/"+harness.OperatorLeaseName)
	}
	sort.Strings(left)
	return left
}

// bundleClusterRoles are the names of the ClusterRoles among the bundle's manifests (besides the CSV's
// clusterPermissions): the metrics reader and the admin, editor and viewer roles for users.
func bundleClusterRoles() []string { return bundleObjects("ClusterRole") }

// bundleCRDs are the names of the bundle's CustomResourceDefinitions, the operator's kinds.
func bundleCRDs() []string { return bundleObjects("CustomResourceDefinition") }

// bundleObjects are the names of the bundle's manifests of a kind.
func bundleObjects(kind string) []string {
	files, err := filepath.Glob(filepath.Join(bundle, "manifests", "*.yaml"))
	Expect(err).NotTo(HaveOccurred())
	var names []string
	for _, file := range files {
		data, err := os.ReadFile(file)
		Expect(err).NotTo(HaveOccurred())
		var meta struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		Expect(yaml.Unmarshal(data, &meta)).To(Succeed())
		if meta.Kind == kind {
			names = append(names, meta.Metadata.Name)
		}
	}
	sort.Strings(names)
	Expect(names).NotTo(BeEmpty(), "no %s in %s", kind, bundle)
	return names
}

// logBundleClusterRoles shows how the InstallPlan made the bundle's ClusterRoles: their labels say whether
// anything will remove them.
func logBundleClusterRoles() {
	for _, name := range bundleClusterRoles() {
		r, err := cp.Clientset.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred(), "the bundle's ClusterRole %s", name)
		fmt.Fprintf(GinkgoWriter, "bundle ClusterRole %s: labels %v, owners %v\n", name, r.Labels, r.OwnerReferences)
	}
}

// leaderOf is the pod holding the operator's leader Lease in namespace.
func leaderOf(namespace string) string {
	lease, err := cp.Clientset.CoordinationV1().Leases(namespace).Get(ctx, harness.OperatorLeaseName, metav1.GetOptions{})
	if err != nil || lease.Spec.HolderIdentity == nil {
		return ""
	}
	pod, _, _ := strings.Cut(*lease.Spec.HolderIdentity, "_")
	return pod
}

func seconds(d time.Duration) float64 { return d.Round(100 * time.Millisecond).Seconds() }
