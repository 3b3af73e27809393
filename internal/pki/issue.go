package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"
)

// KeyPair is a certificate and its private key, PEM-encoded.
type KeyPair struct {
	CertPEM []byte
	KeyPEM  []byte
}

// NewCA makes a self-signed CA valid from now for lifetime.
func NewCA(commonName string, now time.Time, lifetime time.Duration) (KeyPair, error) {
	tmpl := template(commonName, now, lifetime)
	tmpl.IsCA = true
	tmpl.BasicConstraintsValid = true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	return sign(tmpl, nil, nil)
}

// NewServer issues a serving certificate for the given DNS names and IPs, signed by ca.
func NewServer(ca KeyPair, commonName string, dnsNames []string, ips []net.IP, now time.Time, lifetime time.Duration) (KeyPair, error) {
	tmpl := template(commonName, now, lifetime)
	tmpl.DNSNames, tmpl.IPAddresses = dnsNames, ips
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	return signWith(ca, tmpl)
}

// NewClient issues a client certificate signed by ca.
func NewClient(ca KeyPair, commonName string, now time.Time, lifetime time.Duration) (KeyPair, error) {
	tmpl := template(commonName, now, lifetime)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	return signWith(ca, tmpl)
}

// NeedsRenewal is true when the certificate cannot be read, is not valid yet, or two thirds of its
// lifetime have passed.
func NeedsRenewal(certPEM []byte, now time.Time) bool {
	v := validityOf(certPEM)
	if !v.ok {
		return true
	}
	renewAt := v.notBefore.Add(v.notAfter.Sub(v.notBefore) * 2 / 3)
	return now.Before(v.notBefore) || !now.Before(renewAt)
}

// NotAfter is the end of the validity of the first certificate of certPEM; ok is false when it holds none.
func NotAfter(certPEM []byte) (notAfter time.Time, ok bool) {
	v := validityOf(certPEM)
	return v.notAfter, v.ok
}

// ParseCert reads the first certificate of a PEM block.
func ParseCert(certPEM []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(certPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parse certificate: %w", err)
	}
	return cert, nil
}

func template(commonName string, now time.Time, lifetime time.Duration) *x509.Certificate {
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: commonName, Organization: []string{"gnmic-operator"}},
		// A little slack for clocks that are slightly behind.
		NotBefore: now.Add(-5 * time.Minute),
		NotAfter:  now.Add(lifetime),
	}
}

func signWith(ca KeyPair, tmpl *x509.Certificate) (KeyPair, error) {
	caCert, err := ParseCert(ca.CertPEM)
	if err != nil {
		return KeyPair{}, fmt.Errorf("read CA: %w", err)
	}
	block, _ := pem.Decode(ca.KeyPEM)
	if block == nil {
		return KeyPair{}, errors.New("read CA key: no PEM key")
	}
	caKey, err := x509.ParseECPrivateKey(block.Bytes)
	if err != nil {
		return KeyPair{}, fmt.Errorf("read CA key: %w", err)
	}
	return sign(tmpl, caCert, caKey)
}

func sign(tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (KeyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return KeyPair{}, fmt.Errorf("generate key: %w", err)
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		return KeyPair{}, fmt.Errorf("sign certificate %s: %w", tmpl.Subject.CommonName, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return KeyPair{}, fmt.Errorf("encode key: %w", err)
	}
	return KeyPair{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}, nil
}
