package metrics_test

import (
	"encoding/json"
	"fmt"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// createCluster creates a Cluster and writes its status as the reconciler would: collectors pod i
// acknowledged acknowledged[i] targets, unassigned more are waiting.
func createCluster(namespace, name string, unassigned int32, acknowledged ...int32) *operatorv1alpha1.Cluster {
	c := &operatorv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       operatorv1alpha1.ClusterSpec{Image: gnmic.DefaultImage},
	}
	Expect(k8sClient.Create(ctx, c)).To(Succeed())
	writeStatus(c, unassigned, acknowledged...)
	return c
}

func writeStatus(c *operatorv1alpha1.Cluster, unassigned int32, acknowledged ...int32) {
	c.Status.Selector = operatorv1alpha1.ClusterLabel + "=" + c.Name
	c.Status.UnassignedTargets = unassigned
	c.Status.Collectors = nil
	total := unassigned
	for i, n := range acknowledged {
		c.Status.Collectors = append(c.Status.Collectors, operatorv1alpha1.CollectorStatus{
			Pod: fmt.Sprintf("%s-%d", c.Name, i), Ready: true, Targets: n,
		})
		total += n
	}
	c.Status.TargetsCount = total
	Expect(k8sClient.Status().Update(ctx, c)).To(Succeed())
}

func createCollectorPod(namespace, clusterName string, ordinal int) {
	Expect(k8sClient.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, Name: fmt.Sprintf("%s-%d", clusterName, ordinal),
			Labels: map[string]string{operatorv1alpha1.ClusterLabel: clusterName},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "gnmic", Image: gnmic.DefaultImage}}},
	})).To(Succeed())
}

func createNamespace(name string) {
	Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
}

// metricValues is a custom or external MetricValueList reduced to what HPA reads: name or cluster → value.
type metricValues map[string]string

type metricList struct {
	Items []struct {
		DescribedObject struct{ Kind, Name string } `json:"describedObject"`
		MetricName      string                      `json:"metricName"`
		MetricLabels    map[string]string           `json:"metricLabels"`
		Value           string                      `json:"value"`
	} `json:"items"`
}

// getMetrics requests path through kube-apiserver with the given client configuration.
func getMetrics(config *rest.Config, path, labelSelector string) (metricValues, error) {
	raw, err := getRaw(config, path, labelSelector)
	if err != nil {
		return nil, err
	}
	var list metricList
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("decode %s: %w", raw, err)
	}
	values := metricValues{}
	for _, item := range list.Items {
		key := item.DescribedObject.Name
		if item.MetricLabels != nil {
			key = item.MetricLabels["cluster"]
		}
		values[key] = item.Value
	}
	if len(values) != len(list.Items) {
		return nil, fmt.Errorf("%d items under %d names: %s", len(list.Items), len(values), raw)
	}
	return values, nil
}

func getRaw(config *rest.Config, path, labelSelector string) ([]byte, error) {
	c, err := rest.UnversionedRESTClientFor(restConfigForRaw(config))
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	request := c.Get().AbsPath(path)
	if labelSelector != "" {
		request = request.Param("labelSelector", labelSelector)
	}
	raw, err := request.DoRaw(ctx)
	if err != nil {
		// The raw client replaces the message of an error's Status with a generic one; the typed clients of
		// the HPA controller keep it, and so does this.
		var status metav1.Status
		if json.Unmarshal(raw, &status) == nil && status.Kind == "Status" {
			return raw, &apierrors.StatusError{ErrStatus: status}
		}
	}
	return raw, err
}

func restConfigForRaw(config *rest.Config) *rest.Config {
	c := rest.CopyConfig(config)
	c.NegotiatedSerializer = clientgoscheme.Codecs.WithoutConversion()
	return c
}

func podsPath(version, namespace string) string {
	return fmt.Sprintf("/apis/custom.metrics.k8s.io/%s/namespaces/%s/pods/*/gnmic_targets_present", version, namespace)
}

func podPath(namespace, pod string) string {
	return fmt.Sprintf("/apis/custom.metrics.k8s.io/v1beta1/namespaces/%s/pods/%s/gnmic_targets_present", namespace, pod)
}

func clusterPath(namespace, name string) string {
	return fmt.Sprintf("/apis/custom.metrics.k8s.io/v1beta1/namespaces/%s/clusters.operator.gnmic.dev/%s/gnmic_targets_present", namespace, name)
}

func clustersPath(namespace string) string {
	return fmt.Sprintf("/apis/custom.metrics.k8s.io/v1beta1/namespaces/%s/clusters.operator.gnmic.dev/*/gnmic_targets_present", namespace)
}

func externalPath(namespace, metric string) string {
	return fmt.Sprintf("/apis/external.metrics.k8s.io/v1beta1/namespaces/%s/%s", namespace, metric)
}
