package render

import (
	"fmt"
	"path"
	"slices"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
)

// Keys of a TLS Secret (TargetProfile spec.tls.secretRef), which are also the
// names of the files mounted from it: the CA that verifies the devices and
// an optional client certificate with its key.
const (
	CAFile   = "ca.crt"
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
)

// TLSRoot is the directory under which collector pods mount the TLS Secrets
// of target profiles, one directory per Secret.
const TLSRoot = "/var/run/gnmic/tls"

// TLSMountPath is the directory where a collector pod finds the files of the
// TLS Secret called secret: TLSRoot/<secret>/{ca.crt,tls.crt,tls.key}.
// Package workload mounts each Secret there.
func TLSMountPath(secret string) string {
	return path.Join(TLSRoot, secret)
}

// applyTLS sets the TLS fields of t from profile p. Without spec.tls the
// connection is plain text (insecure). With a tls.secretRef, t points at the
// files mounted from that Secret: ca.crt when the Secret has it, and tls.crt
// with tls.key when it has both. The Secret must be known (its data tells
// which files exist) and hold at least one of them.
func applyTLS(t *gnmic.TargetConfig, p *v1alpha1.TargetProfile, secrets map[string]map[string][]byte) error {
	tls := p.Spec.TLS
	if tls == nil {
		t.Insecure = true
		return nil
	}
	t.SkipVerify = tls.SkipVerify
	t.TLSServerName = tls.ServerName
	t.TLSMinVersion = tls.MinVersion
	t.TLSMaxVersion = tls.MaxVersion
	t.CipherSuites = slices.Clone(tls.CipherSuites)
	if tls.SecretRef == "" {
		return nil
	}
	data, ok := secrets[tls.SecretRef]
	if !ok {
		return fmt.Errorf("tls secret %q: %w", tls.SecretRef, ErrSecretNotFound)
	}
	has := func(key string) bool { return len(data[key]) > 0 }
	dir := TLSMountPath(tls.SecretRef)
	switch {
	case has(CertFile) && !has(KeyFile):
		return fmt.Errorf("tls secret %q: %w %q (it has %q)", tls.SecretRef, ErrSecretKeyMissing, KeyFile, CertFile)
	case has(KeyFile) && !has(CertFile):
		return fmt.Errorf("tls secret %q: %w %q (it has %q)", tls.SecretRef, ErrSecretKeyMissing, CertFile, KeyFile)
	case !has(CAFile) && !has(CertFile):
		return fmt.Errorf("tls secret %q: %w %q", tls.SecretRef, ErrSecretKeyMissing, CAFile)
	}
	if has(CAFile) {
		t.TLSCA = path.Join(dir, CAFile)
	}
	if has(CertFile) {
		t.TLSCert = path.Join(dir, CertFile)
		t.TLSKey = path.Join(dir, KeyFile)
	}
	return nil
}
