//go:build e2e

package e2e_test

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/push"
	"github.com/gnmic-operator/gnmic-operator/pushendpoint"
	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

// An inventory posts to the TargetSource push endpoint through the operator's Service, as the shipped install
// makes it (its Service, its container port, its RBAC, the certificate it issues itself): the Service's
// endpoints are every operator replica, so the posts go to both, while only the leader syncs.
var _ = Describe("Pushing an inventory through the operator's Service", Ordered, func() {
	const (
		ns      = "push-e2e"
		service = "gnmic-operator-targetsource-push"
		devices = 50
	)
	key := []byte("hmac-key-of-the-cmdb")
	var (
		endpoints []string
		https     *http.Client
	)

	BeforeAll(func() {
		Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		Expect(k8sClient.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cmdb-push"},
			Data: map[string][]byte{"key": key}})).To(Succeed())
		Expect(k8sClient.Create(ctx, &operatorv1alpha1.TargetSource{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cmdb"},
			Spec: operatorv1alpha1.TargetSourceSpec{
				Push: &operatorv1alpha1.PushInventory{Auth: operatorv1alpha1.PushAuth{
					HMACSecretRef: &operatorv1alpha1.SecretKeyReference{Name: "cmdb-push", Key: "key"}}},
				Mapping: operatorv1alpha1.TargetMapping{Defaults: operatorv1alpha1.TargetDefaults{Profile: "routers"}},
				Sync:    operatorv1alpha1.TargetSync{DeleteAfterMisses: 1},
			}})).To(Succeed())

		Eventually(func(g Gomega) {
			list, err := cp.Clientset.DiscoveryV1().EndpointSlices(harness.OperatorNamespace).List(ctx, metav1.ListOptions{
				LabelSelector: discoveryv1.LabelServiceName + "=" + service})
			g.Expect(err).NotTo(HaveOccurred())
			endpoints = nil
			for _, s := range list.Items {
				for _, e := range s.Endpoints {
					for _, p := range s.Ports {
						if ptr.Deref(e.Conditions.Ready, false) && ptr.Deref(p.Name, "") == "https" {
							endpoints = append(endpoints, net.JoinHostPort(e.Addresses[0], fmt.Sprint(ptr.Deref(p.Port, 0))))
						}
					}
				}
			}
			g.Expect(endpoints).To(HaveLen(2), "both operator replicas serve behind the Service")
		}).WithTimeout(time.Minute).Should(Succeed())

		secret, err := cp.Clientset.CoreV1().Secrets(harness.OperatorNamespace).Get(ctx, service+"-cert", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		roots := x509.NewCertPool()
		Expect(roots.AppendCertsFromPEM(secret.Data["ca.crt"])).To(BeTrue())
		https = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
			RootCAs: roots, ServerName: service + "." + harness.OperatorNamespace + ".svc"}}}
	})

	post := func(endpoint, path, body string, signed bool) (int, string) {
		GinkgoHelper()
		req, err := http.NewRequest(http.MethodPost, "https://"+endpoint+"/targetsources/"+ns+"/cmdb"+path, strings.NewReader(body))
		Expect(err).NotTo(HaveOccurred())
		if signed {
			req.Header.Set(push.SignatureHeader, push.SignatureHeaderValue(key, []byte(body)))
		}
		resp, err := https.Do(req)
		Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		answer, err := io.ReadAll(resp.Body)
		Expect(err).NotTo(HaveOccurred())
		return resp.StatusCode, string(answer)
	}
	targets := func(g Gomega) map[string]string {
		var list operatorv1alpha1.TargetList
		g.Expect(k8sClient.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
		out := map[string]string{}
		for _, t := range list.Items {
			out[t.Name] = t.Spec.Address
		}
		return out
	}

	It("refuses an unsigned post on every replica and stores nothing", func() {
		for _, e := range endpoints {
			code, answer := post(e, "", `[{"name":"intruder","address":"10.9.9.9"}]`, false)
			Expect(code).To(Equal(http.StatusUnauthorized), answer)
		}
		err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: pushendpoint.ConfigMapName("cmdb")}, &corev1.ConfigMap{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no snapshot stored: %v", err)
		Consistently(func(g Gomega) { g.Expect(targets(g)).To(BeEmpty()) }).WithTimeout(2 * time.Second).Should(Succeed())
	})

	It("applies a signed snapshot posted to one replica and a delta posted to the other", func() {
		var records []string
		want := map[string]string{}
		for i := range devices {
			name := fmt.Sprintf("leaf%02d", i)
			records = append(records, fmt.Sprintf(`{"name":%q,"address":"10.0.%d.%d"}`, name, i/250, i%250+1))
			want[name] = fmt.Sprintf("10.0.%d.%d:57400", i/250, i%250+1)
		}
		start := time.Now()
		code, answer := post(endpoints[0], "", "["+strings.Join(records, ",")+"]", true)
		Expect(code).To(Equal(http.StatusOK), answer)
		Eventually(func(g Gomega) { g.Expect(targets(g)).To(Equal(want)) }).WithTimeout(time.Minute).Should(Succeed())
		snapshotTook := time.Since(start)

		start = time.Now()
		code, answer = post(endpoints[1], "/delta", `{"upsert":[{"name":"spine1","address":"10.1.0.1"}],"delete":["leaf00"]}`, true)
		Expect(code).To(Equal(http.StatusOK), answer)
		want["spine1"] = "10.1.0.1:57400"
		delete(want, "leaf00")
		Eventually(func(g Gomega) { g.Expect(targets(g)).To(Equal(want)) }).WithTimeout(time.Minute).Should(Succeed())
		AddReportEntry("push through the Service", fmt.Sprintf("snapshot of %d devices to Targets: %s; delta to Targets: %s",
			devices, snapshotTook.Round(time.Millisecond), time.Since(start).Round(time.Millisecond)))
	})
})
