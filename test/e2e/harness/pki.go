package harness

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// frontProxyClientName is the name kube-apiserver presents to aggregated API servers.
const frontProxyClientName = "front-proxy-client"

// authority is a certificate authority that signs the control plane's certificates.
type authority struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	certPEM []byte
	keyPEM  []byte
}

func newAuthority(name string) (*authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("%s key: %w", name, err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(7 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("%s certificate: %w", name, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse %s certificate: %w", name, err)
	}
	keyPEM, err := encodeECKey(key)
	if err != nil {
		return nil, err
	}
	return &authority{cert: cert, key: key, certPEM: encodeCert(der), keyPEM: keyPEM}, nil
}

// issue signs a leaf certificate: a server certificate when hosts are given, a client certificate otherwise.
func (a *authority) issue(commonName string, organizations []string, hosts ...string) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("key for %s: %w", commonName, err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, nil, fmt.Errorf("serial for %s: %w", commonName, err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: commonName, Organization: organizations},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(7 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if len(hosts) > 0 {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		for _, h := range hosts {
			if ip := net.ParseIP(h); ip != nil {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			} else {
				tmpl.DNSNames = append(tmpl.DNSNames, h)
			}
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		return nil, nil, fmt.Errorf("certificate for %s: %w", commonName, err)
	}
	keyPEM, err = encodeECKey(key)
	if err != nil {
		return nil, nil, err
	}
	return encodeCert(der), keyPEM, nil
}

func encodeCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func encodeECKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encode key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

// pkiFiles are the paths of everything writePKI wrote.
type pkiFiles struct {
	CACert, CAKey                        string
	ServingCert, ServingKey              string
	FrontProxyCA                         string
	FrontProxyClientCert, FrontProxyKey  string
	ServiceAccountKey, ServiceAccountPub string
	AdminKubeconfig                      string
}

// writePKI writes the cluster CA, kube-apiserver's serving certificate, the front-proxy CA and client, the
// service-account key pair and an admin kubeconfig (client certificate in system:masters) into dir.
func writePKI(dir, server string) (pkiFiles, error) {
	f := pkiFiles{
		CACert: filepath.Join(dir, "ca.crt"), CAKey: filepath.Join(dir, "ca.key"),
		ServingCert: filepath.Join(dir, "apiserver.crt"), ServingKey: filepath.Join(dir, "apiserver.key"),
		FrontProxyCA:         filepath.Join(dir, "front-proxy-ca.crt"),
		FrontProxyClientCert: filepath.Join(dir, "front-proxy-client.crt"), FrontProxyKey: filepath.Join(dir, "front-proxy-client.key"),
		ServiceAccountKey: filepath.Join(dir, "sa.key"), ServiceAccountPub: filepath.Join(dir, "sa.pub"),
		AdminKubeconfig: filepath.Join(dir, "admin.kubeconfig"),
	}
	ca, err := newAuthority("gnmic-e2e-ca")
	if err != nil {
		return f, err
	}
	servingCert, servingKey, err := ca.issue("kube-apiserver", nil,
		"127.0.0.1", "localhost", "10.96.0.1", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
		"kubernetes.default.svc.cluster.local")
	if err != nil {
		return f, err
	}
	adminCert, adminKey, err := ca.issue("e2e-admin", []string{"system:masters"})
	if err != nil {
		return f, err
	}
	frontProxy, err := newAuthority("front-proxy-ca")
	if err != nil {
		return f, err
	}
	proxyCert, proxyKey, err := frontProxy.issue(frontProxyClientName, nil)
	if err != nil {
		return f, err
	}
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return f, fmt.Errorf("service-account key: %w", err)
	}
	saPub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return f, fmt.Errorf("encode service-account public key: %w", err)
	}
	files := map[string][]byte{
		f.CACert: ca.certPEM, f.CAKey: ca.keyPEM,
		f.ServingCert: servingCert, f.ServingKey: servingKey,
		f.FrontProxyCA: frontProxy.certPEM, f.FrontProxyClientCert: proxyCert, f.FrontProxyKey: proxyKey,
		f.ServiceAccountKey: pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(saKey)}),
		f.ServiceAccountPub: pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPub}),
		f.AdminKubeconfig:   kubeconfig(server, ca.certPEM, adminCert, adminKey),
	}
	for path, content := range files {
		if err := os.WriteFile(path, content, 0o600); err != nil {
			return f, fmt.Errorf("write %s: %w", path, err)
		}
	}
	return f, nil
}

func kubeconfig(server string, caPEM, certPEM, keyPEM []byte) []byte {
	b64 := base64.StdEncoding.EncodeToString
	return []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: admin
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: e2e
  context:
    cluster: e2e
    user: admin
current-context: e2e
`, server, b64(caPEM), b64(certPEM), b64(keyPEM)))
}
