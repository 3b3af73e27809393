package controllers_test

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/credentials"
	"github.com/gnmic-operator/gnmic-operator/controllers/owned"
	"github.com/gnmic-operator/gnmic-operator/internal/pki"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
	"github.com/gnmic-operator/gnmic-operator/test/fakecollector"
)

var _ = Describe("Certificate roles", func() {
	It("moves a Cluster of the one-CA release to a CA per role without losing collection: new Secrets, the previous client certificate until the collectors roll, the old device certificate only at the tunnel", func() {
		By("running a fleet as the previous release left it, with no operator yet")
		f := newFleetWith(2, func(c *operatorv1alpha1.Cluster) {
			c.Spec.API.GNMI = &operatorv1alpha1.GNMIServerSpec{Enabled: ptr.To(true)}
			c.Spec.GRPCTunnel = &operatorv1alpha1.GRPCTunnelSpec{}
		})
		old := writeOneCALayout(f)
		apiTLS := old[f.name+"-api-tls"]
		var err error
		f.serverTLS, err = fakecollector.MutualTLS(apiTLS["tls.crt"], apiTLS["tls.key"], apiTLS["ca.crt"])
		Expect(err).NotTo(HaveOccurred())
		for o := range f.collectors {
			f.restartContainer(o)
		}
		f.addTargets(0, 6)

		By("starting the operator of this release: it reaches the collectors that trust the one CA")
		op := startOperator()
		defer op.Stop()
		f.converged(6, 0)
		ca := f.secret(f.name + "-api-ca").Data
		Expect(ca["ca.crt"]).To(Equal(old[f.name+"-api-ca"]["ca.crt"]), "the one CA stays, as the collector server CA")
		Expect(ca["previous-client.crt"]).To(Equal(old[f.name+"-api-ca"]["client.crt"]))
		Expect(ca["client-ca.crt"]).NotTo(BeEmpty())
		newAPITLS := f.secret(f.name + "-api-tls").Data
		Expect(newAPITLS["tls.crt"]).To(Equal(apiTLS["tls.crt"]), "the serving certificate is not re-issued")
		Expect(newAPITLS["ca.crt"]).To(Equal(ca["client-ca.crt"]), "the REST API is to trust the operator client CA alone")
		for _, name := range []string{f.name + "-gnmi-ca", f.name + "-tunnel-ca"} {
			s := f.secret(name)
			Expect(metav1.IsControlledBy(s, f.cluster())).To(BeTrue(), "Secret %s", name)
			Expect(s.Data).To(HaveKey("tls.key"), "Secret %s", name)
		}
		var sts appsv1.StatefulSet
		Expect(k8sClient.Get(suiteCtx, f.key(), &sts)).To(Succeed())
		oldSum := sha256.Sum256(apiTLS["tls.crt"])
		Expect(sts.Spec.Template.Annotations[credentials.APITLSChecksumAnnotation]).NotTo(Equal(hex.EncodeToString(oldSum[:8])),
			"the pod template changes, so that the collectors roll onto the new trust")

		By("rolling the collectors one by one onto the new trust: each is reached, with the new client certificate")
		f.serverTLS = f.issuedServerTLS()
		for o := range f.collectors {
			f.restartContainer(o)
			f.converged(6, 0)
		}
		oldDevice := old[f.name+"-tunnel-client-tls"]
		device, err := tls.X509KeyPair(oldDevice["tls.crt"], oldDevice["tls.key"])
		Expect(err).NotTo(HaveOccurred())
		// The device's client sends its certificate whatever CAs the collector asks for, as an attacker's would
		// (crypto/tls by itself sends none that they did not issue).
		asDevice := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
			InsecureSkipVerify: true, GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
				return &device, nil
			}}}}
		for o, col := range f.collectors {
			_, err := asDevice.Get(col.URL() + "/api/v1/targets")
			Expect(err).To(HaveOccurred(), "a rolled collector's REST API accepts the device certificate of the one CA")
			resp, err := f.operatorHTTPClient(o).Get(col.URL() + "/api/v1/targets")
			Expect(err).NotTo(HaveOccurred(), "the operator's new client certificate is refused")
			resp.Body.Close()
		}

		By("letting devices and subscribers of the one CA in at their own listener until their certificates expire")
		for _, name := range []string{f.name + "-tunnel", f.name + "-gnmi"} {
			listener, roleCA := f.secret(name+"-tls").Data, f.secret(name+"-ca").Data
			Expect(bytes.Contains(listener["ca.crt"], roleCA["tls.crt"])).To(BeTrue(), "%s-tls trusts its role's CA", name)
			Expect(bytes.Contains(listener["ca.crt"], ca["ca.crt"])).To(BeTrue(), "%s-tls trusts the one CA during the grace", name)
			notAfter, _ := pki.NotAfter(old[name+"-client-tls"]["tls.crt"])
			Expect(string(listener["legacy-trust-until"])).To(Equal(notAfter.UTC().Format(time.RFC3339)))
			Expect(f.secret(name + "-client-tls").Data["ca.crt"]).To(Equal(ca["ca.crt"]))
		}
	})
})

// writeOneCALayout writes the Secrets the release before certificate roles kept for the fleet's Cluster, owned by
// it: one CA in <cluster>-api-ca that signed the operator's client certificate, every serving certificate and the
// device and subscriber certificates, and that every listener trusted. It returns their data by name.
func writeOneCALayout(f *fleet) map[string]map[string][]byte {
	cluster := f.cluster()
	issuedAt, lifetime := time.Now().Add(-24*time.Hour), 2160*time.Hour
	ca, err := pki.NewCA(fmt.Sprintf("gnmic-operator %s/%s collector CA", f.ns, f.name), issuedAt, 10*365*24*time.Hour)
	Expect(err).NotTo(HaveOccurred())
	must := func(p pki.KeyPair, err error) pki.KeyPair {
		Expect(err).NotTo(HaveOccurred())
		return p
	}
	files := func(p pki.KeyPair) map[string][]byte {
		return map[string][]byte{"tls.crt": p.CertPEM, "tls.key": p.KeyPEM, "ca.crt": ca.CertPEM}
	}
	operatorClient := must(pki.NewClient(ca, "gnmic-operator", issuedAt, lifetime))
	svc := fmt.Sprintf("%s.%s.svc", f.name, f.ns)
	data := map[string]map[string][]byte{
		f.name + "-api-ca": {"ca.crt": ca.CertPEM, "ca.key": ca.KeyPEM, "client.crt": operatorClient.CertPEM,
			"client.key": operatorClient.KeyPEM, "fingerprint.key": bytes.Repeat([]byte{7}, 32)},
		f.name + "-api-tls": files(must(pki.NewServer(ca, "gnmic collector "+svc,
			[]string{"*." + svc, "*." + svc + ".cluster.local", svc}, nil, issuedAt, lifetime))),
		f.name + "-gnmi-tls": files(must(pki.NewServer(ca, "gnmi server", workload.GNMIServerDNSNames(cluster), nil,
			issuedAt, lifetime))),
		f.name + "-gnmi-client-tls": files(must(pki.NewClient(ca, "gnmi client", issuedAt, lifetime))),
		f.name + "-tunnel-tls": files(must(pki.NewServer(ca, "tunnel server", workload.TunnelServerDNSNames(cluster), nil,
			issuedAt, lifetime))),
		f.name + "-tunnel-client-tls": files(must(pki.NewClient(ca, "dial-in device", issuedAt, lifetime))),
	}
	for name, d := range data {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns,
			Labels: workload.Labels(cluster), Annotations: owned.OwnerAnnotations("Cluster", f.name)}, Data: d}
		Expect(controllerutil.SetControllerReference(cluster, secret, scheme)).To(Succeed())
		Expect(k8sClient.Create(suiteCtx, secret)).To(Succeed())
	}
	return data
}
