package fakecollector

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
)

// PKI is a throwaway certificate authority with one server and one client
// certificate, for serving the fake over mutual TLS as gNMIc does with
// api-server.tls.ca-file set. Keys are ECDSA P-256, valid for one day.
type PKI struct {
	CA     *x509.Certificate
	CAPEM  []byte
	Server tls.Certificate
	Client tls.Certificate
	// ClientCertPEM and ClientKeyPEM are the client pair, for code that
	// loads certificates from Secrets or files.
	ClientCertPEM []byte
	ClientKeyPEM  []byte

	serverCertPEM, serverKeyPEM []byte
}

// NewPKI issues a CA, a server certificate for hosts (IP addresses or DNS
// names; 127.0.0.1 and localhost when none) and a client certificate.
func NewPKI(hosts ...string) (*PKI, error) {
	if len(hosts) == 0 {
		hosts = []string{"127.0.0.1", "localhost"}
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate CA key: %w", err)
	}
	caTemplate := template("fake collector CA")
	caTemplate.IsCA = true
	caTemplate.BasicConstraintsValid = true
	caTemplate.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("create CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, fmt.Errorf("parse CA certificate: %w", err)
	}
	p := &PKI{CA: ca, CAPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})}

	serverTemplate := template("fake collector")
	serverTemplate.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			serverTemplate.IPAddresses = append(serverTemplate.IPAddresses, ip)
		} else {
			serverTemplate.DNSNames = append(serverTemplate.DNSNames, h)
		}
	}
	if p.Server, p.serverCertPEM, p.serverKeyPEM, err = issue(serverTemplate, ca, caKey); err != nil {
		return nil, fmt.Errorf("issue server certificate: %w", err)
	}
	clientTemplate := template("gnmic-operator")
	clientTemplate.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	if p.Client, p.ClientCertPEM, p.ClientKeyPEM, err = issue(clientTemplate, ca, caKey); err != nil {
		return nil, fmt.Errorf("issue client certificate: %w", err)
	}
	return p, nil
}

// ServerPEM is the server certificate and its key, PEM-encoded, as a
// collector reads them from its cert-file and key-file.
func (p *PKI) ServerPEM() (certPEM, keyPEM []byte) { return p.serverCertPEM, p.serverKeyPEM }

// MutualTLS is the server configuration gNMIc builds from api-server.tls with
// cert-file, key-file and ca-file set and client-auth empty (or
// require-verify): it serves the certificate and requires a client
// certificate signed by a CA of caPEM. For a Cluster the operator issued
// them, they are the keys tls.crt, tls.key and ca.crt of its Secret
// <cluster>-api-tls.
func MutualTLS(certPEM, keyPEM, caPEM []byte) (*tls.Config, error) {
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("load server certificate: %w", err)
	}
	clientCAs := x509.NewCertPool()
	if !clientCAs.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("load client CA: no certificate in its PEM")
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientCAs:    clientCAs,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		MinVersion:   tls.VersionTLS12,
	}, nil
}

// ServerTLS serves with the server certificate and requires client
// certificates signed by the CA.
func (p *PKI) ServerTLS() *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{p.Server},
		ClientCAs:    p.pool(),
		ClientAuth:   tls.RequireAndVerifyClientCert,
		MinVersion:   tls.VersionTLS12,
	}
}

// ClientTLS trusts the CA and presents the client certificate.
func (p *PKI) ClientTLS() *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{p.Client},
		RootCAs:      p.pool(),
		MinVersion:   tls.VersionTLS12,
	}
}

func (p *PKI) pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(p.CA)
	return pool
}

func template(commonName string) *x509.Certificate {
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: commonName},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
}

func issue(tmpl, ca *x509.Certificate, caKey *ecdsa.PrivateKey) (tls.Certificate, []byte, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, nil, err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return tls.Certificate{}, nil, nil, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	return cert, certPEM, keyPEM, err
}
