package metricsadapter

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// certFiles copies the serving certificate from its Secret into CertDir, where the server reads it and
// picks up rotations. It runs on every replica, so followers serve with the certificate the leader rotated;
// reading the Secret directly also spares a cache of every Secret.
type certFiles struct {
	reader client.Reader
	key    types.NamespacedName
	dir    string
	period time.Duration

	ready     chan struct{}
	readyOnce sync.Once
}

func newCertFiles(reader client.Reader, opts Options) *certFiles {
	return &certFiles{
		reader: reader, key: opts.certSecretKey(), dir: opts.CertDir, period: opts.ResyncPeriod,
		ready: make(chan struct{}),
	}
}

// NeedLeaderElection is false: every replica serves.
func (c *certFiles) NeedLeaderElection() bool { return false }

// Ready is closed once CertDir holds a certificate and its key.
func (c *certFiles) Ready() <-chan struct{} { return c.ready }

// Start copies the Secret every second until a certificate is there, then every period.
func (c *certFiles) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("metrics-api-certificate")
	wait := time.Second
	for {
		written, err := c.sync(ctx)
		switch {
		case err != nil:
			logger.Error(err, "copy serving certificate", "secret", c.key)
		case written:
			logger.Info("serving certificate written", "secret", c.key, "dir", c.dir)
			c.readyOnce.Do(func() { close(c.ready) })
			wait = c.period
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// sync writes the files that differ from the Secret. It reports whether the directory holds a certificate.
func (c *certFiles) sync(ctx context.Context) (bool, error) {
	var secret corev1.Secret
	if err := c.reader.Get(ctx, c.key, &secret); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("get secret %s: %w", c.key, err)
	}
	if len(secret.Data[certFileName]) == 0 || len(secret.Data[keyFileName]) == 0 {
		return false, nil
	}
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return false, fmt.Errorf("create certificate directory %s: %w", c.dir, err)
	}
	// The key goes first: a reload between the two writes then fails and is retried, instead of serving a
	// certificate with a key that does not match.
	for _, name := range []string{keyFileName, certFileName, caFileName} {
		if err := writeIfChanged(filepath.Join(c.dir, name), secret.Data[name]); err != nil {
			return false, err
		}
	}
	return true, nil
}

// writeIfChanged replaces path atomically with content unless it already holds it.
func writeIfChanged(path string, content []byte) error {
	if current, err := os.ReadFile(path); err == nil && bytes.Equal(current, content) {
		return nil
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, content, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	return nil
}
