package pushendpoint

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/gnmic-operator/gnmic-operator/internal/pki"
)

// Keys of the certificate Secret: those of a kubernetes.io/tls Secret and cert-manager's ca.crt, plus the CA's
// key, which re-issues the serving certificate without changing the CA senders trust.
const (
	certKey   = "tls.crt"
	keyKey    = "tls.key"
	caCertKey = "ca.crt"
	caKeyKey  = "ca.key"
)

// Lifetimes of the managed certificates; each is renewed after two thirds of it (pki.NeedsRenewal). A new CA
// is a change senders must follow (docs/target-sources.md); a new serving certificate is not.
const (
	caLifetime      = 5 * 365 * 24 * time.Hour
	servingLifetime = 365 * 24 * time.Hour
)

// servingCertificate keeps the endpoint's certificate in memory, read from its Secret on every replica, so
// that no file and no writable volume is involved and a rotation reaches every replica within ResyncPeriod.
// With a managed certificate every replica also issues or renews it when the Secret needs it: writes are
// optimistic (create, or update at the resourceVersion read), so when two replicas try at once one wins and
// the other reads its certificate at the next round. No leader is needed, which suits --sharding.
type servingCertificate struct {
	reader client.Reader
	writer client.Writer
	key    types.NamespacedName
	manage bool
	names  []string
	period time.Duration
	now    func() time.Time

	current   atomic.Pointer[tls.Certificate]
	ready     chan struct{}
	readyOnce sync.Once
}

func newServingCertificate(reader client.Reader, writer client.Writer, opts Options) *servingCertificate {
	return &servingCertificate{
		reader: reader, writer: writer,
		key:    types.NamespacedName{Namespace: opts.ServiceNamespace, Name: opts.CertSecret},
		manage: opts.ManageCertificate, names: opts.dnsNames(), period: opts.ResyncPeriod, now: time.Now,
		ready: make(chan struct{}),
	}
}

// NeedLeaderElection is false: every replica serves.
func (c *servingCertificate) NeedLeaderElection() bool { return false }

// Start reads (and if managed, keeps) the certificate every second until there is one, then every period.
func (c *servingCertificate) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("targetsource-push-certificate")
	wait := time.Second
	for {
		loaded, err := c.sync(ctx)
		switch {
		case err != nil:
			logger.Error(err, "keep the push endpoint's certificate", "secret", c.key)
		case loaded:
			c.readyOnce.Do(func() {
				logger.Info("serving certificate loaded", "secret", c.key)
				close(c.ready)
			})
			wait = c.period
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// Ready is closed once a certificate is loaded.
func (c *servingCertificate) Ready() <-chan struct{} { return c.ready }

// GetCertificate is the tls.Config hook: the certificate last read.
func (c *servingCertificate) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if cert := c.current.Load(); cert != nil {
		return cert, nil
	}
	return nil, errors.New("no serving certificate yet")
}

// sync reads the Secret, issues what it lacks when the certificate is managed, and loads the key pair.
func (c *servingCertificate) sync(ctx context.Context) (bool, error) {
	secret := &corev1.Secret{}
	err := c.reader.Get(ctx, c.key, secret)
	exists := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("get secret %s: %w", c.key, err)
	}
	if c.manage {
		issued, err := c.issue(secret, exists)
		if err != nil {
			return false, err
		}
		if issued {
			if exists {
				err = c.writer.Update(ctx, secret)
			} else {
				err = c.writer.Create(ctx, secret)
			}
			switch {
			case apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err):
				return false, nil // another replica issued one: read it at the next round
			case apierrors.IsNotFound(err):
				return false, fmt.Errorf("create secret %s: namespace %s does not exist: name the operator's namespace "+
					"with POD_NAMESPACE or --targetsource-push-service-namespace: %w", c.key, c.key.Namespace, err)
			case err != nil:
				return false, fmt.Errorf("write secret %s: %w", c.key, err)
			}
		}
	} else if !exists {
		return false, nil
	}
	pair, err := tls.X509KeyPair(secret.Data[certKey], secret.Data[keyKey])
	if err != nil {
		return false, fmt.Errorf("secret %s: %w", c.key, err)
	}
	c.current.Store(&pair)
	return true, nil
}

// issue fills the Secret with a CA (kept while it is valid) and a serving certificate for the names, unless
// those it holds are still good. It reports whether it changed the Secret.
func (c *servingCertificate) issue(secret *corev1.Secret, exists bool) (bool, error) {
	now := c.now()
	if !exists {
		secret.ObjectMeta = metav1.ObjectMeta{Namespace: c.key.Namespace, Name: c.key.Name}
		secret.Type = corev1.SecretTypeOpaque
	}
	// The label lets the operator write this Secret (config/rbac/operator_writes_policy.yaml).
	if secret.Labels == nil {
		secret.Labels = map[string]string{}
	}
	labelled := secret.Labels["app.kubernetes.io/managed-by"] == "gnmic-operator"
	secret.Labels["app.kubernetes.io/managed-by"] = "gnmic-operator"
	if secret.Data == nil {
		secret.Data = map[string][]byte{}
	}
	ca := pki.KeyPair{CertPEM: secret.Data[caCertKey], KeyPEM: secret.Data[caKeyKey]}
	newCA := len(ca.KeyPEM) == 0 || pki.NeedsRenewal(ca.CertPEM, now)
	if !newCA && labelled && !c.servingNeedsRenewal(secret.Data[certKey], now) {
		return false, nil
	}
	if newCA {
		var err error
		if ca, err = pki.NewCA("gnmic-operator TargetSource push CA", now, caLifetime); err != nil {
			return false, fmt.Errorf("issue the push endpoint's CA: %w", err)
		}
	}
	pair, err := pki.NewServer(ca, c.names[0], c.names, nil, now, servingLifetime)
	if err != nil {
		return false, fmt.Errorf("issue the push endpoint's certificate: %w", err)
	}
	secret.Data[caCertKey], secret.Data[caKeyKey] = ca.CertPEM, ca.KeyPEM
	secret.Data[certKey], secret.Data[keyKey] = pair.CertPEM, pair.KeyPEM
	return true, nil
}

// servingNeedsRenewal is true when the certificate is due or does not name every DNS name (one added with
// --targetsource-push-cert-dns-names).
func (c *servingCertificate) servingNeedsRenewal(certPEM []byte, now time.Time) bool {
	if pki.NeedsRenewal(certPEM, now) {
		return true
	}
	cert, err := pki.ParseCert(certPEM)
	if err != nil {
		return true
	}
	for _, n := range c.names {
		if !slices.Contains(cert.DNSNames, n) {
			return true
		}
	}
	return false
}
