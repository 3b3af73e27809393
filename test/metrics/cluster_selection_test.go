package metrics_test

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/metrics/pkg/client/external_metrics"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// The HPA controller sends an external metric's selector as it is written in the HPA (matchLabels,
// matchExpressions), converted with metav1.LabelSelectorAsSelector, through the external metrics client
// used here; the specs do the same.
var _ = Describe("which Clusters a metric selector means, through kube-apiserver", Ordered, func() {
	const ns = "selection"
	var hpaClient external_metrics.ExternalMetricsClient

	BeforeAll(func() {
		createNamespace(ns)
		labelCluster(createCluster(ns, "edge", 4, 7, 5), map[string]string{"tier": "gold", "site": "par"})
		labelCluster(createCluster(ns, "core", 0, 3), map[string]string{"tier": "silver"})
		// canary carries a label cluster=edge of its own: the name of the Cluster edge wins.
		labelCluster(createCluster(ns, "canary", 1, 1), map[string]string{"tier": "gold", "cluster": "edge"})
		var err error
		hpaClient, err = external_metrics.NewForConfig(cfg)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() (metricValues, error) {
			return externalValues(hpaClient, ns, "targets_demand", &metav1.LabelSelector{})
		}).Should(HaveLen(3))
	})

	It("refuses with NotFound, naming the Cluster, a selector naming a Cluster that does not exist", func() {
		for _, metric := range []string{"unassigned_targets", "targets_demand"} {
			_, err := externalValues(hpaClient, ns, metric, matchLabels("cluster", "edgee"))
			Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%s: want 404, got %v", metric, err)
			Expect(err).To(MatchError(ContainSubstring(`Cluster "edgee" not found in namespace "selection"`)), metric)
		}
		_, err := externalValues(hpaClient, ns, "unassigned_targets", &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "cluster", Operator: metav1.LabelSelectorOpIn, Values: []string{"edge", "edgee"}}},
		})
		Expect(err).To(MatchError(ContainSubstring(`Cluster "edgee" not found`)))
	})

	It("refuses with NotFound a selector that matches no Cluster, and an empty namespace", func() {
		_, err := externalValues(hpaClient, ns, "targets_demand", matchLabels("tier", "glod"))
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "want 404, got %v", err)
		Expect(err).To(MatchError(ContainSubstring(`no Cluster in namespace "selection" matches "tier=glod"`)))
		createNamespace("selection-empty")
		_, err = externalValues(hpaClient, "selection-empty", "targets_demand", &metav1.LabelSelector{})
		Expect(err).To(MatchError(ContainSubstring(`no Cluster in namespace "selection-empty"`)))
	})

	It("answers 0, not an error, for a Cluster that exists with nothing unassigned", func() {
		Expect(externalValues(hpaClient, ns, "unassigned_targets", matchLabels("cluster", "core"))).
			To(Equal(metricValues{"core": "0"}))
	})

	It("answers once the named Cluster is created", func() {
		_, err := externalValues(hpaClient, ns, "targets_demand", matchLabels("cluster", "late"))
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "want 404, got %v", err)
		createCluster(ns, "late", 2, 6)
		Eventually(func() (metricValues, error) {
			return externalValues(hpaClient, ns, "targets_demand", matchLabels("cluster", "late"))
		}).Should(Equal(metricValues{"late": "8"}))
	})

	DescribeTable("matches the Cluster's own labels plus cluster=<name> in both APIs",
		func(selector *metav1.LabelSelector, unassigned metricValues, present metricValues) {
			Expect(externalValues(hpaClient, ns, "unassigned_targets", selector)).To(Equal(unassigned))
			parsed, err := metav1.LabelSelectorAsSelector(selector)
			Expect(err).NotTo(HaveOccurred())
			Expect(getMetrics(cfg, clustersPath(ns), parsed.String())).To(Equal(present))
		},
		Entry("the name by matchLabels, not a Cluster labelled cluster=edge", matchLabels("cluster", "edge"),
			metricValues{"edge": "4"}, metricValues{"edge": "12"}),
		Entry("names by matchExpressions", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "cluster", Operator: metav1.LabelSelectorOpIn, Values: []string{"edge", "core"}},
		}}, metricValues{"edge": "4", "core": "0"}, metricValues{"edge": "12", "core": "3"}),
		Entry("an own label by matchLabels", matchLabels("tier", "gold"),
			metricValues{"edge": "4", "canary": "1"}, metricValues{"edge": "12", "canary": "1"}),
		Entry("own labels by matchExpressions", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"gold", "silver"}},
			{Key: "site", Operator: metav1.LabelSelectorOpDoesNotExist},
		}}, metricValues{"canary": "1", "core": "0"}, metricValues{"canary": "1", "core": "3"}),
		Entry("the name and an own label together", &metav1.LabelSelector{
			MatchLabels:      map[string]string{"cluster": "edge"},
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "site", Operator: metav1.LabelSelectorOpIn, Values: []string{"par"}}},
		}, metricValues{"edge": "4"}, metricValues{"edge": "12"}),
	)

	It("refuses with NotFound the Cluster object of a Cluster that does not exist and a Cluster selector matching none", func() {
		_, err := getMetrics(cfg, clusterPath(ns, "edgee"), "")
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "want 404, got %v", err)
		Expect(err).To(MatchError(ContainSubstring(`"edgee" not found`)))
		_, err = getMetrics(cfg, clustersPath(ns), "cluster=edgee")
		Expect(err).To(MatchError(ContainSubstring(`Cluster "edgee" not found in namespace "selection"`)))
	})
})

func labelCluster(c *operatorv1alpha1.Cluster, own map[string]string) {
	c.Labels = own
	Expect(k8sClient.Update(ctx, c)).To(Succeed())
}

func matchLabels(key, value string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{key: value}}
}

// externalValues lists an external metric as the HPA controller does: cluster label → value.
func externalValues(c external_metrics.ExternalMetricsClient, namespace, metric string, selector *metav1.LabelSelector) (metricValues, error) {
	parsed, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		return nil, err
	}
	list, err := c.NamespacedMetrics(namespace).List(metric, parsed)
	if err != nil {
		return nil, err
	}
	values := metricValues{}
	for _, item := range list.Items {
		values[item.MetricLabels["cluster"]] = item.Value.String()
	}
	if len(values) != len(list.Items) {
		return nil, fmt.Errorf("%d items under %d cluster labels", len(list.Items), len(values))
	}
	return values, nil
}
