package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
)

// GNMIServerSpec runs the collectors' own gNMI server, to which downstream systems subscribe for the data the
// collectors gather (gNMIc's gnmi-server: Subscribe from its cache, and Get and Set relayed to the targets).
// With TLS on the collector API (the default) it serves TLS with a certificate from the Cluster's collector
// server CA and accepts only clients with a certificate from its subscriber CA (the Secret <cluster>-gnmi-ca):
// the operator keeps one for downstream systems in the Secret <cluster>-gnmi-client-tls. With spec.api.insecure
// it serves plain gRPC. docs/gnmi-server.md, docs/security.md.
type GNMIServerSpec struct {
	// Enabled runs the gNMI server on every collector pod, with a Service <cluster>-gnmi.
	// +kubebuilder:default=false
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

	// Port the gNMI server listens on (gNMIc's default, 57400). No output may listen on it.
	// +kubebuilder:default=57400
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port int32 `json:"port,omitempty"`

	// Service tunes the Service <cluster>-gnmi that selects the collector pods on the gNMI port.
	// +optional
	Service *GNMIServiceSpec `json:"service,omitempty"`
}

// GNMIServiceSpec configures the Service of the collectors' gNMI server.
type GNMIServiceSpec struct {
	// Type of the Service.
	// +kubebuilder:validation:Enum=ClusterIP;NodePort;LoadBalancer
	// +kubebuilder:default=ClusterIP
	// +optional
	Type corev1.ServiceType `json:"type,omitempty"`

	// Annotations added to the Service.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`

	// Labels added to the Service. They cannot override the operator's labels (operator.gnmic.dev/*).
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('operator.gnmic.dev/'))",message="service labels must not set operator.gnmic.dev/ labels: the operator owns them"
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
}
