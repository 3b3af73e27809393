package fakecollector

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
)

// ListenerTLSSection is the tls section of one of gNMIc's listeners in its configuration file: api-server.tls,
// gnmi-server.tls or tunnel-server.tls. Paths are files of the collector's filesystem.
type ListenerTLSSection struct {
	CAFile     string `json:"ca-file,omitempty"`
	CertFile   string `json:"cert-file,omitempty"`
	KeyFile    string `json:"key-file,omitempty"`
	ClientAuth string `json:"client-auth,omitempty"`
}

// ListenerTLS is the server configuration gNMIc builds from a listener's tls section (its NewTLSConfig), with
// the files read through readFile: the certificate and key served, and the clients it accepts, which only
// ca-file and client-auth decide. With ca-file set and client-auth empty, clients must present a certificate
// that chains to a certificate of ca-file (as with require-verify); with neither, any client is served. So
// whatever trust the operator renders into a listener's files is exactly what the fake accepts.
func ListenerTLS(section ListenerTLSSection, readFile func(path string) ([]byte, error)) (*tls.Config, error) {
	certPEM, err := readFile(section.CertFile)
	if err != nil {
		return nil, fmt.Errorf("read cert-file %s: %w", section.CertFile, err)
	}
	keyPEM, err := readFile(section.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("read key-file %s: %w", section.KeyFile, err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("load server certificate: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	switch section.ClientAuth {
	case "":
		if section.CAFile != "" {
			cfg.ClientAuth = tls.RequireAndVerifyClientCert
		}
	case "request":
		cfg.ClientAuth = tls.RequestClientCert
	case "require":
		cfg.ClientAuth = tls.RequireAnyClientCert
	case "verify-if-given":
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	case "require-verify":
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	default:
		return nil, fmt.Errorf("unknown client-auth %q", section.ClientAuth)
	}
	if section.CAFile != "" {
		caPEM, err := readFile(section.CAFile)
		if err != nil {
			return nil, fmt.Errorf("read ca-file %s: %w", section.CAFile, err)
		}
		cfg.ClientCAs = x509.NewCertPool()
		if !cfg.ClientCAs.AppendCertsFromPEM(caPEM) {
			return nil, fmt.Errorf("load ca-file %s: no certificate in it", section.CAFile)
		}
	}
	return cfg, nil
}
