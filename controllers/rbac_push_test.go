package controllers_test

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/pushendpoint"
)

// pushEndpoint is where the RBAC spec's operator serves the TargetSource push endpoint, and the namespace of
// its certificate Secret.
var pushEndpoint struct{ address, namespace string }

// setupPushEndpoint adds the push endpoint to the operator, as the operator's run does.
func setupPushEndpoint(mgr ctrl.Manager, namespace string) {
	opts := pushendpoint.DefaultOptions()
	opts.BindAddress = fmt.Sprintf("127.0.0.1:%d", freePort("127.0.0.1"))
	opts.ServiceNamespace, opts.ResyncPeriod = namespace, time.Second
	Expect(pushendpoint.Setup(suiteCtx, mgr, opts, nil)).To(Succeed())
	pushEndpoint.address, pushEndpoint.namespace = opts.BindAddress, namespace
}

// pushToTargetSource posts a snapshot of two devices, then a delta, to a push TargetSource through the
// endpoint, as an inventory does: the operator issues the endpoint's certificate into its Secret, reads the
// TargetSource's token Secret, stores the snapshot in its ConfigMap, annotates the TargetSource and makes the
// Targets, all with the permissions config/default grants.
func pushToTargetSource(refusedNothing func()) {
	ns := "targetsource-push-rbac"
	Expect(k8sClient.Create(suiteCtx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	Expect(k8sClient.Create(suiteCtx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "push"},
		Data: map[string][]byte{"token": []byte("t0ken")}})).To(Succeed())
	ts := &operatorv1alpha1.TargetSource{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cmdb"},
		Spec: operatorv1alpha1.TargetSourceSpec{
			Push: &operatorv1alpha1.PushInventory{Auth: operatorv1alpha1.PushAuth{
				BearerTokenRef: &operatorv1alpha1.SecretKeyReference{Name: "push", Key: "token"}}},
			Mapping: operatorv1alpha1.TargetMapping{Defaults: operatorv1alpha1.TargetDefaults{Profile: "routers"}},
			Sync:    operatorv1alpha1.TargetSync{DeleteAfterMisses: 1},
		}}
	Expect(k8sClient.Create(suiteCtx, ts)).To(Succeed())

	var https *http.Client
	Eventually(func(g Gomega) {
		secret := &corev1.Secret{}
		g.Expect(k8sClient.Get(suiteCtx, types.NamespacedName{Namespace: pushEndpoint.namespace,
			Name: "gnmic-operator-targetsource-push-cert"}, secret)).To(Succeed())
		roots := x509.NewCertPool()
		g.Expect(roots.AppendCertsFromPEM(secret.Data["ca.crt"])).To(BeTrue())
		https = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
			RootCAs: roots, ServerName: "gnmic-operator-targetsource-push." + pushEndpoint.namespace + ".svc"}}}
	}, 20*time.Second).Should(Succeed(), "the operator issued the push endpoint's certificate")
	post := func(g Gomega, path, body string) {
		req, err := http.NewRequest(http.MethodPost, "https://"+pushEndpoint.address+"/targetsources/"+ns+"/cmdb"+path, strings.NewReader(body))
		g.Expect(err).NotTo(HaveOccurred())
		req.Header.Set("Authorization", "Bearer t0ken")
		resp, err := https.Do(req)
		g.Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		answer, _ := io.ReadAll(resp.Body)
		g.Expect(resp.StatusCode).To(Equal(http.StatusOK), string(answer))
	}
	targets := func(g Gomega) []string {
		var list operatorv1alpha1.TargetList
		g.Expect(k8sClient.List(suiteCtx, &list, client.InNamespace(ns))).To(Succeed())
		var names []string
		for _, t := range list.Items {
			names = append(names, t.Name)
		}
		return names
	}

	Eventually(func(g Gomega) { post(g, "", `[{"name":"r1","address":"10.0.0.1"},{"name":"r2","address":"10.0.0.2"}]`) },
		20*time.Second).Should(Succeed())
	Eventually(func(g Gomega) {
		refusedNothing()
		g.Expect(targets(g)).To(ConsistOf("r1", "r2"))
	}, 20*time.Second).Should(Succeed())
	Eventually(func(g Gomega) { post(g, "/delta", `{"upsert":[{"name":"r3","address":"10.0.0.3"}],"delete":["r1"]}`) },
		20*time.Second).Should(Succeed())
	Eventually(func(g Gomega) {
		refusedNothing()
		g.Expect(targets(g)).To(ConsistOf("r2", "r3"))
		got := &operatorv1alpha1.TargetSource{}
		g.Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(ts), got)).To(Succeed())
		g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, operatorv1alpha1.ConditionSynced)).To(BeTrue())
	}, 20*time.Second).Should(Succeed())
}
