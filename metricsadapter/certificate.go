package metricsadapter

import (
	"context"
	"fmt"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Keys of the certificate Secret, as cert-controller writes them.
const (
	certFileName = "tls.crt"
	keyFileName  = "tls.key"
	caFileName   = "ca.crt"
)

func (o *Options) certSecretKey() types.NamespacedName {
	return types.NamespacedName{Namespace: o.ServiceNamespace, Name: o.CertSecret}
}

// serviceDNSNames are the names kube-apiserver may dial the Service by; the first is the one it uses.
func (o *Options) serviceDNSNames() []string {
	return []string{
		o.ServiceName + "." + o.ServiceNamespace + ".svc",
		o.ServiceName + "." + o.ServiceNamespace + ".svc.cluster.local",
		o.ServiceName + "." + o.ServiceNamespace,
		o.ServiceName,
		"localhost",
	}
}

// addCertRotator has cert-controller generate the CA and serving certificate in the Secret and renew them
// before they expire. Only the leader rotates (one writer); every replica copies the Secret to its CertDir
// (certFiles). The rotator injects no CA anywhere: the APIService registrar does, and only into APIServices
// this operator owns.
func addCertRotator(mgr ctrl.Manager, opts Options) error {
	names := opts.serviceDNSNames()
	err := rotator.AddRotator(mgr, &rotator.CertRotator{
		SecretKey:             opts.certSecretKey(),
		CertDir:               opts.CertDir,
		CAName:                serverName + "-ca",
		CAOrganization:        "gnmic-operator",
		DNSName:               names[0],
		ExtraDNSNames:         names[1:],
		IsReady:               make(chan struct{}),
		RequireLeaderElection: true,
		ControllerName:        "metrics-api-cert-" + opts.CertSecret,
	})
	if err != nil {
		return fmt.Errorf("add metrics API certificate rotator: %w", err)
	}
	return nil
}

// ensureCertSecret creates the empty certificate Secret the rotator fills: cert-controller rotates a Secret
// but does not create one.
func ensureCertSecret(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	key := opts.certSecretKey()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: key.Namespace,
			Name:      key.Name,
			Labels:    map[string]string{"app.kubernetes.io/managed-by": "gnmic-operator"},
		},
		Type: corev1.SecretTypeOpaque,
	}
	err := mgr.GetClient().Create(ctx, secret)
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("create metrics API certificate secret %s: namespace %s does not exist: create it, "+
			"or name the operator's namespace with POD_NAMESPACE or --metrics-api-service-namespace: %w",
			key, key.Namespace, err)
	case err != nil && !apierrors.IsAlreadyExists(err):
		return fmt.Errorf("create metrics API certificate secret %s: %w", key, err)
	}
	return nil
}
