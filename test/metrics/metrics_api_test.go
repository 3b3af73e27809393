package metrics_test

import (
	"encoding/json"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

var _ = Describe("metrics APIs through kube-apiserver", Ordered, func() {
	const ns = "telemetry"
	var edge *operatorv1alpha1.Cluster
	edgeSelector := operatorv1alpha1.ClusterLabel + "=edge"

	BeforeAll(func() {
		createNamespace(ns)
		edge = createCluster(ns, "edge", 4, 7, 5)
		createCluster(ns, "core", 0, 3)
		for i := range 3 {
			createCollectorPod(ns, "edge", i)
		}
		createCollectorPod(ns, "core", 0)
	})

	// v1beta2 is served too (see the handler tests), but in this suite its APIService belongs to "KEDA".
	It("gives every pod of a Cluster's selector the targets it acknowledged, 0 for a pod without status", func() {
		Eventually(func() (metricValues, error) { return getMetrics(cfg, podsPath("v1beta1", ns), edgeSelector) }).
			Should(Equal(metricValues{"edge-0": "7", "edge-1": "5", "edge-2": "0"}))
	})

	It("answers for one pod by name and for the Cluster object", func() {
		Expect(getMetrics(cfg, podPath(ns, "edge-1"), "")).To(Equal(metricValues{"edge-1": "5"}))
		Expect(getMetrics(cfg, clusterPath(ns, "edge"), "")).To(Equal(metricValues{"edge": "12"}))
	})

	It("follows changes of Cluster status", func() {
		writeStatus(edge, 0, 8, 8, 4)
		Eventually(func() (metricValues, error) { return getMetrics(cfg, podsPath("v1beta1", ns), edgeSelector) }).
			Should(Equal(metricValues{"edge-0": "8", "edge-1": "8", "edge-2": "4"}))
		Eventually(func() (metricValues, error) {
			return getMetrics(cfg, externalPath(ns, "unassigned_targets"), "cluster=edge")
		}).
			Should(Equal(metricValues{"edge": "0"}))
		writeStatus(edge, 4, 7, 5)
		Eventually(func() (metricValues, error) {
			return getMetrics(cfg, externalPath(ns, "unassigned_targets"), "cluster=edge")
		}).
			Should(Equal(metricValues{"edge": "4"}))
	})

	It("serves unassigned_targets and targets_demand per Cluster, narrowed by a cluster selector", func() {
		Expect(getMetrics(cfg, externalPath(ns, "unassigned_targets"), "")).To(Equal(metricValues{"edge": "4", "core": "0"}))
		Expect(getMetrics(cfg, externalPath(ns, "targets_demand"), "")).To(Equal(metricValues{"edge": "16", "core": "3"}))
		Expect(getMetrics(cfg, externalPath(ns, "targets_demand"), "cluster=core")).To(Equal(metricValues{"core": "3"}))
	})

	It("answers one item of value 0, never an empty list, when a pod selector matches no pod", func() {
		Expect(getMetrics(cfg, podsPath("v1beta1", ns), operatorv1alpha1.ClusterLabel+"=absent")).To(Equal(metricValues{"": "0"}))
	})

	It("lists the real metric names in discovery", func() {
		Expect(discoveredNames("/apis/custom.metrics.k8s.io/v1beta1")).To(ConsistOf(
			"pods/gnmic_targets_present", "clusters.operator.gnmic.dev/gnmic_targets_present"))
		Expect(discoveredNames("/apis/external.metrics.k8s.io/v1beta1")).To(ConsistOf("unassigned_targets", "targets_demand",
			"unassigned_target_units", "target_units_demand"))
	})

	It("refuses a ServiceAccount without RBAC on the metrics APIs and lets one with it read", func() {
		reader := serviceAccountConfig(ns, "dashboard")
		_, err := getMetrics(reader, externalPath(ns, "unassigned_targets"), "")
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want 403, got %v", err)
		_, err = getMetrics(reader, podsPath("v1beta1", ns), edgeSelector)
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want 403, got %v", err)

		grantMetricsRead(ns, "dashboard")
		Eventually(func() (metricValues, error) {
			return getMetrics(reader, externalPath(ns, "unassigned_targets"), "cluster=edge")
		}).
			Should(Equal(metricValues{"edge": "4"}))
	})

	It("refuses an unauthenticated caller", func() {
		anonymous := rest.AnonymousClientConfig(cfg)
		_, err := getMetrics(anonymous, externalPath(ns, "unassigned_targets"), "")
		Expect(apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err)).To(BeTrue(), "want 401 or 403, got %v", err)
	})
})

func discoveredNames(path string) []string {
	raw, err := getRaw(cfg, path, "")
	Expect(err).NotTo(HaveOccurred())
	var list metav1.APIResourceList
	Expect(json.Unmarshal(raw, &list)).To(Succeed())
	var names []string
	for _, r := range list.APIResources {
		names = append(names, r.Name)
	}
	return names
}

// serviceAccountConfig connects as a new ServiceAccount, with a token from the TokenRequest API.
func serviceAccountConfig(namespace, name string) *rest.Config {
	Expect(k8sClient.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}})).To(Succeed())
	token, err := clientset.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: new(int64(3600))},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	c := rest.AnonymousClientConfig(cfg)
	c.BearerToken = token.Status.Token
	return c
}

// grantMetricsRead gives the ServiceAccount what config/rbac gives the HPA controller.
func grantMetricsRead(namespace, name string) {
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader-" + name},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{"custom.metrics.k8s.io", "external.metrics.k8s.io"},
			Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"},
		}},
	}
	Expect(k8sClient.Create(ctx, role)).To(Succeed())
	Expect(k8sClient.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: name}},
	})).To(Succeed())
}

var _ = Describe("coexistence with another owner of a metrics API", func() {
	It("leaves the foreign APIService untouched, reports it and serves the other APIs", func() {
		foreign := getAPIService(foreignAPIService)
		Consistently(func() string { return getAPIService(foreignAPIService).GetResourceVersion() }).
			WithTimeout(5 * time.Second).Should(Equal(foreign.GetResourceVersion()))
		service, _, _ := unstructuredString(foreign, "spec", "service", "name")
		Expect(service).To(Equal("keda-operator-metrics-apiserver"))
		_, hasCA, _ := unstructuredString(foreign, "spec", "caBundle")
		Expect(hasCA).To(BeFalse())

		Eventually(conflictGauge).WithArguments(foreignAPIService).Should(Equal(1.0))
		Eventually(conflictEventNotes).Should(ContainElement(ContainSubstring(foreignAPIService)))
		Expect(apiServiceAvailable("v1beta1.external.metrics.k8s.io")).To(Equal("True"))
		Expect(conflictGauge("v1beta1.external.metrics.k8s.io")).To(Equal(0.0))
	})
})

func conflictEventNotes() []string {
	events, err := clientset.EventsV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	var notes []string
	for _, e := range events.Items {
		if e.Reason == "MetricsAPIConflict" && strings.Contains(e.Regarding.Name, "custom.metrics") {
			notes = append(notes, e.Note)
		}
	}
	return notes
}
