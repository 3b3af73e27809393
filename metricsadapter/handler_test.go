package metricsadapter

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

func podsPath(version, selector string) string {
	return fmt.Sprintf("/apis/custom.metrics.k8s.io/%s/namespaces/%s/pods/*/%s?labelSelector=%s",
		version, testNamespace, TargetsPresentMetric, url.QueryEscape(selector))
}

func externalPath(metric, selector string) string {
	return fmt.Sprintf("/apis/external.metrics.k8s.io/v1beta1/namespaces/%s/%s?labelSelector=%s",
		testNamespace, metric, url.QueryEscape(selector))
}

func TestHandlerServesTheRequestsHPASends(t *testing.T) {
	handler := testHandler(t, fakeReader(t, cluster("edge", 4, 7, 5), collectorPod("edge", 0), collectorPod("edge", 1)))

	cases := map[string]string{
		podsPath("v1beta1", operatorv1alpha1.ClusterLabel+"=edge"): `"name":"edge-1"`,
		podsPath("v1beta2", operatorv1alpha1.ClusterLabel+"=edge"): `"name":"edge-1"`,
		externalPath(UnassignedTargetsMetric, "cluster=edge"):      `"metricLabels":{"cluster":"edge"}`,
		externalPath(TargetsDemandMetric, "cluster=edge"):          `"metricLabels":{"cluster":"edge"}`,
		"/apis/custom.metrics.k8s.io/v1beta1":                      `"name":"pods/gnmic_targets_present"`,
		"/apis/external.metrics.k8s.io/v1beta1":                    `"name":"targets_demand"`,
	}
	for path, want := range cases {
		rec := get(handler, path)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), want) {
			t.Errorf("GET %s: %d %s, want 200 containing %s", path, rec.Code, rec.Body.String(), want)
		}
	}
}

func TestHandlerRefusesAnUnknownMetric(t *testing.T) {
	handler := testHandler(t, fakeReader(t))
	rec := get(handler, externalPath("queue_length", ""))
	if rec.Code != http.StatusNotFound {
		t.Errorf("unknown external metric: %d, want 404", rec.Code)
	}
}

func TestHandlerAnswersNotFoundNamingAnAbsentCluster(t *testing.T) {
	handler := testHandler(t, fakeReader(t, cluster("edge", 4, 7, 5)))

	for _, metric := range []string{UnassignedTargetsMetric, TargetsDemandMetric} {
		rec := get(handler, externalPath(metric, "cluster=edgee"))
		if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), `Cluster \"edgee\" not found`) {
			t.Errorf("%s of an absent Cluster: %d %s, want 404 naming the Cluster", metric, rec.Code, rec.Body.String())
		}
	}
}
