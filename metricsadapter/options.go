package metricsadapter

import (
	"flag"
	"os"
	"time"
)

// Options configure the metrics API server, its certificate and its APIService registrations.
type Options struct {
	// CustomMetrics serves custom.metrics.k8s.io (gnmic_targets_present).
	CustomMetrics bool
	// ExternalMetrics serves external.metrics.k8s.io (unassigned_targets, targets_demand,
	// unassigned_target_units, target_units_demand).
	ExternalMetrics bool

	// BindAddress and Port are where the metrics API server listens (HTTPS).
	BindAddress string
	Port        int

	// ServiceName, ServiceNamespace and ServicePort name the Service in front of the operator pods that the
	// APIService objects point at; the serving certificate is issued for that Service's DNS names.
	ServiceName      string
	ServiceNamespace string
	ServicePort      int

	// ManageAPIServices creates and updates the APIService objects at run time. Switch it off when the
	// APIServices are installed by other means; the server still runs.
	ManageAPIServices bool
	// ManageCertificate generates and rotates the serving certificate in CertSecret. When off, CertDir must
	// already hold tls.crt and tls.key and APIServices are registered with CABundle.
	ManageCertificate bool
	// CertSecret is the Secret (in ServiceNamespace) holding the CA and the serving certificate.
	CertSecret string
	// CertDir is where the serving certificate is written for the server to read; it follows rotations.
	CertDir string
	// CABundle is the PEM CA of a certificate provided in CertDir when ManageCertificate is off.
	CABundle []byte

	// ResyncPeriod is how often the APIService registrations and the certificate files are checked again.
	ResyncPeriod time.Duration

	// DrainPeriod is how long the server keeps serving once the operator stops (SIGTERM), reporting not
	// ready meanwhile, so that the replica's endpoint leaves the Service before its port closes. 0 closes
	// it at once.
	DrainPeriod time.Duration

	// WatchNamespaces are the namespaces the operator watches (--watch-namespace); empty means every one. The
	// metrics of another namespace are not found, as in a namespace without Clusters.
	WatchNamespaces []string

	// AuthKubeconfig is the kubeconfig used for delegated authentication and authorization (TokenReview,
	// SubjectAccessReview, the extension-apiserver-authentication ConfigMap). Empty: the manager's own
	// connection is used.
	AuthKubeconfig string
}

// DefaultCertDir is where the serving certificate is written unless --metrics-api-cert-dir says otherwise:
// the mount path of the emptyDir volume config/manager gives the operator's container, whose root file
// system is read-only. A fixed path rather than one under os.TempDir(): $TMPDIR must not move the
// certificate off that volume.
const DefaultCertDir = "/tmp/gnmic-operator-metrics-api"

// DefaultDrainPeriod is --metrics-api-drain-period's default: long enough for a deleted pod's endpoint to
// leave kube-apiserver's view of the Service (the endpoint is marked terminating at the deletion; what
// takes time is that write reaching every watcher), short against the pod's 30 s grace period.
const DefaultDrainPeriod = 5 * time.Second

// DefaultOptions serve both APIs on :6443 behind the Service gnmic-operator-metrics-api in the operator's
// namespace (POD_NAMESPACE, else gnmic-operator-system).
func DefaultOptions() Options {
	namespace := os.Getenv("POD_NAMESPACE")
	if namespace == "" {
		namespace = "gnmic-operator-system"
	}
	return Options{
		CustomMetrics:     true,
		ExternalMetrics:   true,
		BindAddress:       "0.0.0.0",
		Port:              6443,
		ServiceName:       "gnmic-operator-metrics-api",
		ServiceNamespace:  namespace,
		ServicePort:       443,
		ManageAPIServices: true,
		ManageCertificate: true,
		CertSecret:        "gnmic-operator-metrics-api-cert",
		CertDir:           DefaultCertDir,
		ResyncPeriod:      30 * time.Second,
		DrainPeriod:       DefaultDrainPeriod,
	}
}

// Enabled is true when at least one metrics API is served.
func (o *Options) Enabled() bool {
	return o.CustomMetrics || o.ExternalMetrics
}

// BindFlags registers the --metrics-api-* flags.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.BoolVar(&o.CustomMetrics, "metrics-api-custom", o.CustomMetrics,
		"Serve custom.metrics.k8s.io (gnmic_targets_present per collector pod and per Cluster).")
	fs.BoolVar(&o.ExternalMetrics, "metrics-api-external", o.ExternalMetrics,
		"Serve external.metrics.k8s.io (unassigned_targets, targets_demand and their weight-unit twins per Cluster).")
	fs.StringVar(&o.BindAddress, "metrics-api-bind-address", o.BindAddress, "Address the metrics API server listens on.")
	fs.IntVar(&o.Port, "metrics-api-port", o.Port, "HTTPS port of the metrics API server.")
	fs.StringVar(&o.ServiceName, "metrics-api-service-name", o.ServiceName,
		"Service in front of the operator pods that the metrics APIService objects point at.")
	fs.StringVar(&o.ServiceNamespace, "metrics-api-service-namespace", o.ServiceNamespace,
		"Namespace of that Service and of the certificate Secret.")
	fs.IntVar(&o.ServicePort, "metrics-api-service-port", o.ServicePort, "Port of that Service.")
	fs.BoolVar(&o.ManageAPIServices, "metrics-api-manage-apiservices", o.ManageAPIServices,
		"Create and update the metrics APIService objects. An APIService that points at another Service is never modified.")
	fs.BoolVar(&o.ManageCertificate, "metrics-api-manage-certificate", o.ManageCertificate,
		"Generate and rotate the metrics API serving certificate in --metrics-api-cert-secret.")
	fs.StringVar(&o.CertSecret, "metrics-api-cert-secret", o.CertSecret, "Secret holding the metrics API CA and serving certificate.")
	fs.StringVar(&o.CertDir, "metrics-api-cert-dir", o.CertDir,
		"Directory the serving certificate is written to (or read from when the certificate is not managed).")
	fs.DurationVar(&o.ResyncPeriod, "metrics-api-resync-period", o.ResyncPeriod,
		"How often APIService registrations and certificate files are checked again.")
	fs.DurationVar(&o.DrainPeriod, "metrics-api-drain-period", o.DrainPeriod,
		"When the operator stops, how long the metrics API keeps serving after it reports not ready, so that "+
			"the replica leaves the Service's endpoints before its port closes. 0 closes it at once. At most "+
			"--graceful-shutdown-timeout; both must fit in the pod's terminationGracePeriodSeconds.")
	fs.StringVar(&o.AuthKubeconfig, "metrics-api-auth-kubeconfig", o.AuthKubeconfig,
		"Kubeconfig for delegated authentication and authorization. Empty: the operator's own connection.")
}
