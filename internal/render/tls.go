package render

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"slices"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
)

// Keys of a TLS Secret (TargetProfile spec.tls.secretRef): the CA that
// verifies the devices and an optional client certificate with its key.
const (
	CAFile   = "ca.crt"
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
)

// tlsFileKeys are the keys of a TLS Secret that targets use, in the order
// they are considered.
var tlsFileKeys = []string{CAFile, CertFile, KeyFile}

// TLSRoot is the directory where every collector pod mounts its Cluster's
// target TLS Secret, which holds the TLS files of all the Cluster's targets
// (see BundleTLS). It is the same for every Cluster and every selection, so
// that the pod template never depends on which targets need TLS.
const TLSRoot = "/var/run/gnmic/tls"

// tlsFileSeparator joins a Secret's name and the file in TLSFileName. Secret
// names cannot hold an underscore, so the first one ends the name.
const tlsFileSeparator = "__"

// maxSecretKey is the longest key a Secret's data may have.
const maxSecretKey = 253

// TLSFileName is the name under which the Cluster's target TLS Secret holds
// the file key of the TLS Secret called secret: <secret>__<key>, which is
// also the name of the file in TLSRoot. A Secret name too long for that
// (over 244 characters) is cut and completed by a hash of the whole name,
// after a single underscore, which no Secret name holds either: names stay
// distinct and valid Secret keys.
func TLSFileName(secret, key string) string {
	name := secret + tlsFileSeparator + key
	if len(name) <= maxSecretKey {
		return name
	}
	sum := sha256.Sum256([]byte(secret))
	hash := hex.EncodeToString(sum[:8])
	keep := maxSecretKey - len(tlsFileSeparator) - len(key) - len(hash) - 1
	return secret[:keep] + "_" + hash + tlsFileSeparator + key
}

// TLSFilePath is where a collector pod finds the file key of the TLS Secret
// called secret.
func TLSFilePath(secret, key string) string {
	return path.Join(TLSRoot, TLSFileName(secret, key))
}

// tlsFiles are the keys of a TLS Secret's data that its targets use: ca.crt
// when it has one, tls.crt and tls.key when it has both. A Secret with a
// certificate and no key (or the reverse), or with neither a CA nor a
// certificate, is an error naming the Secret and the key.
func tlsFiles(secret string, data map[string][]byte) ([]string, error) {
	has := func(key string) bool { return len(data[key]) > 0 }
	switch {
	case has(CertFile) && !has(KeyFile):
		return nil, fmt.Errorf("tls secret %q: %w %q (it has %q)", secret, ErrSecretKeyMissing, KeyFile, CertFile)
	case has(KeyFile) && !has(CertFile):
		return nil, fmt.Errorf("tls secret %q: %w %q (it has %q)", secret, ErrSecretKeyMissing, CertFile, KeyFile)
	case !has(CAFile) && !has(CertFile):
		return nil, fmt.Errorf("tls secret %q: %w %q", secret, ErrSecretKeyMissing, CAFile)
	}
	return slices.DeleteFunc(slices.Clone(tlsFileKeys), func(key string) bool { return !has(key) }), nil
}

// applyTLS sets the TLS fields of t from profile p. Without spec.tls the
// connection is plain text (insecure). With a tls.secretRef, t points at the
// files of that Secret in the Cluster's target TLS Secret: ca.crt when the
// Secret has it, and tls.crt with tls.key when it has both. The Secret must
// be known (its data tells which files exist), hold at least one of them, and
// not be omitted from the Cluster's target TLS Secret.
func applyTLS(t *gnmic.TargetConfig, p *v1alpha1.TargetProfile, conn Connections) error {
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
	ref := tls.SecretRef
	if ref == "" {
		return nil
	}
	data, ok := conn.Secrets[ref]
	if !ok {
		return fmt.Errorf("tls secret %q: %w", ref, ErrSecretNotFound)
	}
	files, err := tlsFiles(ref, data)
	if err != nil {
		return err
	}
	if why, omitted := conn.TLSOmitted[ref]; omitted {
		return fmt.Errorf("tls secret %q: %w", ref, why)
	}
	for _, key := range files {
		switch key {
		case CAFile:
			t.TLSCA = TLSFilePath(ref, key)
		case CertFile:
			t.TLSCert = TLSFilePath(ref, key)
		case KeyFile:
			t.TLSKey = TLSFilePath(ref, key)
		}
	}
	return nil
}
