package pushendpoint

import (
	"flag"
	"os"
	"strings"
	"time"
)

// Options configure the push endpoint of TargetSources.
type Options struct {
	// Enabled serves the endpoint on every replica.
	Enabled bool
	// BindAddress is where it listens (HTTPS).
	BindAddress string
	// MaxBodyBytes is the largest post read; a larger one is refused (413) before any of it is parsed.
	MaxBodyBytes int64

	// ServiceName and ServiceNamespace name the Service in front of the operator's pods; the managed
	// certificate is issued for its DNS names and ExtraDNSNames.
	ServiceName      string
	ServiceNamespace string
	ExtraDNSNames    []string
	// ManageCertificate issues and renews the serving certificate in CertSecret (a CA of its own). Off, the
	// endpoint serves the certificate another tool (cert-manager, say) keeps in CertSecret.
	ManageCertificate bool
	// CertSecret (in ServiceNamespace) holds tls.crt and tls.key, and with a managed certificate ca.crt, the
	// CA that in-cluster senders trust.
	CertSecret string
	// ResyncPeriod is how often every replica reads the certificate Secret again (rotations reach it so).
	ResyncPeriod time.Duration
	// DrainPeriod is how long the endpoint keeps serving once the operator stops, reporting not ready, so that
	// the replica leaves the Service before its port closes. The operator sets it to the metrics API's
	// (--metrics-api-drain-period): both leave the same endpoints.
	DrainPeriod time.Duration
}

// DefaultMaxBodyBytes is 16 MiB: about 70,000 trimmed NetBox devices (232 bytes each), more than one
// ConfigMap stores once compressed (docs/target-sources.md, "How much fits").
const DefaultMaxBodyBytes = 16 << 20

// DefaultOptions serve on :9443 behind the Service gnmic-operator-targetsource-push in the operator's
// namespace, with a managed certificate.
func DefaultOptions() Options {
	namespace := os.Getenv("POD_NAMESPACE")
	if namespace == "" {
		namespace = "gnmic-operator-system"
	}
	return Options{
		Enabled:           true,
		BindAddress:       ":9443",
		MaxBodyBytes:      DefaultMaxBodyBytes,
		ServiceName:       "gnmic-operator-targetsource-push",
		ServiceNamespace:  namespace,
		ManageCertificate: true,
		CertSecret:        "gnmic-operator-targetsource-push-cert",
		ResyncPeriod:      30 * time.Second,
	}
}

// dnsNames are the names the managed certificate is issued for.
func (o *Options) dnsNames() []string {
	svc := o.ServiceName + "." + o.ServiceNamespace
	return append([]string{svc + ".svc", svc + ".svc.cluster.local", svc, o.ServiceName, "localhost"}, o.ExtraDNSNames...)
}

// dnsNameList reads a comma-separated flag value.
type dnsNameList struct{ names *[]string }

func (l dnsNameList) String() string {
	if l.names == nil {
		return ""
	}
	return strings.Join(*l.names, ",")
}

func (l dnsNameList) Set(v string) error {
	*l.names = nil
	for _, n := range strings.Split(v, ",") {
		if n = strings.TrimSpace(n); n != "" {
			*l.names = append(*l.names, n)
		}
	}
	return nil
}

// BindFlags registers the --targetsource-push-* flags.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.BoolVar(&o.Enabled, "targetsource-push", o.Enabled,
		"Serve the push endpoint of TargetSources (docs/target-sources.md, \"Push\") on every replica.")
	fs.StringVar(&o.BindAddress, "targetsource-push-bind-address", o.BindAddress, "Address the push endpoint listens on (HTTPS).")
	fs.Int64Var(&o.MaxBodyBytes, "targetsource-push-max-body-bytes", o.MaxBodyBytes,
		"Largest post the push endpoint reads; a larger one is refused with 413 before it is parsed.")
	fs.StringVar(&o.ServiceName, "targetsource-push-service-name", o.ServiceName,
		"Service in front of the operator's pods that senders reach the push endpoint by; the managed certificate names it.")
	fs.StringVar(&o.ServiceNamespace, "targetsource-push-service-namespace", o.ServiceNamespace,
		"Namespace of that Service and of the certificate Secret.")
	fs.Var(dnsNameList{&o.ExtraDNSNames}, "targetsource-push-cert-dns-names",
		"More DNS names of the managed certificate (comma-separated), e.g. a LoadBalancer's host name.")
	fs.BoolVar(&o.ManageCertificate, "targetsource-push-manage-certificate", o.ManageCertificate,
		"Issue and renew the push endpoint's certificate in --targetsource-push-cert-secret. Off: serve the certificate "+
			"another tool keeps there (tls.crt, tls.key).")
	fs.StringVar(&o.CertSecret, "targetsource-push-cert-secret", o.CertSecret, "Secret holding the push endpoint's certificate.")
	fs.DurationVar(&o.ResyncPeriod, "targetsource-push-resync-period", o.ResyncPeriod,
		"How often every replica reads the push endpoint's certificate Secret again.")
}
