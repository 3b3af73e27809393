package controllers_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gnmic-operator/gnmic-operator/metricsadapter"
)

// foreignMetricsAPI is an APIService another component (KEDA) registered before the operator started.
const foreignMetricsAPI = "v1beta2.custom.metrics.k8s.io"

// registerStaleAPIServices is what the operator finds at start: its own registration of
// v1beta1.external.metrics.k8s.io from an earlier install, with a CA it no longer has, and KEDA's
// custom.metrics.k8s.io v1beta2. Every metrics APIService goes when the container ends: the suite's other
// specs serve no metrics API.
func registerStaleAPIServices(operatorNamespace string) {
	own := metricsadapter.DefaultOptions().ServiceName
	Expect(k8sClient.Create(suiteCtx, apiService("v1beta1.external.metrics.k8s.io", operatorNamespace, own,
		[]byte("the CA of an earlier install")))).To(Succeed())
	Expect(k8sClient.Create(suiteCtx, apiService(foreignMetricsAPI, "keda", "keda-operator-metrics-apiserver", nil))).To(Succeed())
	DeferCleanup(func() {
		for _, name := range []string{"v1beta1.custom.metrics.k8s.io", foreignMetricsAPI, "v1beta1.external.metrics.k8s.io"} {
			u := &unstructured.Unstructured{}
			u.SetAPIVersion("apiregistration.k8s.io/v1")
			u.SetKind("APIService")
			u.SetName(name)
			Expect(client.IgnoreNotFound(k8sClient.Delete(suiteCtx, u))).To(Succeed())
		}
	})
}

// apiService registers name (<version>.<group>) for the Service namespace/service, with the CA, or without
// TLS verification when ca is nil.
func apiService(name, namespace, service string, ca []byte) *unstructured.Unstructured {
	version, group, _ := strings.Cut(name, ".")
	spec := map[string]any{
		"group": group, "version": version, "groupPriorityMinimum": int64(100), "versionPriority": int64(100),
		"service": map[string]any{"namespace": namespace, "name": service, "port": int64(443)},
	}
	if ca == nil {
		spec["insecureSkipTLSVerify"] = true
	} else {
		spec["caBundle"] = base64.StdEncoding.EncodeToString(ca)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": name}, "spec": spec,
	}}
}

// apiServiceTarget is the Service ("namespace/name") an APIService points at, and its CA bundle.
func apiServiceTarget(g Gomega, name string) (string, []byte) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apiregistration.k8s.io/v1")
	u.SetKind("APIService")
	g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Name: name}, u)).To(Succeed())
	namespace, _, _ := unstructured.NestedString(u.Object, "spec", "service", "namespace")
	service, _, _ := unstructured.NestedString(u.Object, "spec", "service", "name")
	encoded, _, _ := unstructured.NestedString(u.Object, "spec", "caBundle")
	ca, err := base64.StdEncoding.DecodeString(encoded)
	g.Expect(err).NotTo(HaveOccurred())
	return namespace + "/" + service, ca
}

// metricsCA is the CA of the metrics API's serving certificate, once the operator made it.
func metricsCA(g Gomega, namespace, secret string) []byte {
	var s corev1.Secret
	g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: namespace, Name: secret}, &s)).To(Succeed())
	g.Expect(s.Data["ca.crt"]).NotTo(BeEmpty())
	return s.Data["ca.crt"]
}

// metricsAPIConflictEvents are the notes of the Events reporting an APIService the operator leaves alone.
func metricsAPIConflictEvents(g Gomega) []string {
	var list eventsv1.EventList
	g.Expect(k8sClient.List(suiteCtx, &list)).To(Succeed())
	var notes []string
	for _, e := range list.Items {
		if e.Reason == "MetricsAPIConflict" {
			notes = append(notes, e.Note)
		}
	}
	return notes
}

// metricsReaderToken is a token of a new ServiceAccount of the namespace bound, as config/default binds the
// HorizontalPodAutoscaler controller, to the role that reads the metrics APIs.
func metricsReaderToken(namespace string, install *operatorInstall) string {
	var readerRole string
	for _, obj := range install.objects {
		var binding rbacv1.ClusterRoleBinding
		if obj.GetKind() != "ClusterRoleBinding" || fromUnstructured(obj, &binding) != nil {
			continue
		}
		for _, s := range binding.Subjects {
			if s.Namespace == "kube-system" && s.Name == "horizontal-pod-autoscaler" {
				readerRole = binding.RoleRef.Name
			}
		}
	}
	Expect(readerRole).NotTo(BeEmpty(), "config/default binds no role to the HorizontalPodAutoscaler")
	Expect(k8sClient.Create(suiteCtx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "autoscaler"}})).To(Succeed())
	Expect(k8sClient.Create(suiteCtx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader-" + namespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: readerRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: "autoscaler"}},
	})).To(Succeed())
	clientset, err := kubernetes.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	token, err := clientset.CoreV1().ServiceAccounts(namespace).CreateToken(suiteCtx, "autoscaler", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(3600))},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	return token.Status.Token
}

// getMetric asks the operator's metrics API server for path directly, as kube-apiserver's aggregation layer
// would on behalf of the token's ServiceAccount, trusting the CA in the certificate Secret.
func getMetric(metrics metricsadapter.Options, namespace, token, path string) (string, error) {
	var secret corev1.Secret
	if err := k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: namespace, Name: metrics.CertSecret}, &secret); err != nil {
		return "", err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(secret.Data["ca.crt"]) {
		return "", fmt.Errorf("no CA in secret %s yet", metrics.CertSecret)
	}
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "localhost", MinVersion: tls.VersionTLS12}}}
	req, err := http.NewRequestWithContext(suiteCtx, http.MethodGet,
		"https://"+net.JoinHostPort(metrics.BindAddress, strconv.Itoa(metrics.Port))+path, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", resp.Status, body)
	}
	return string(body), nil
}
