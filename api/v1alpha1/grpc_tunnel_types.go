package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
)

// GRPCTunnelSpec runs gNMIc's gRPC tunnel server (github.com/openconfig/grpctunnel) on every collector pod, for
// devices that dial in instead of being dialed: a device registers a target (its type and ID) over the tunnel,
// and the collector whose tunnel server it reached collects it when a TunnelTargetPolicy of the Cluster
// matches it. With TLS on the collector API (the default) the tunnel server serves a certificate from the
// Cluster's collector server CA; spec.grpcTunnel.clientAuth says whether devices must present one of its device
// CA too. docs/dial-in.md.
type GRPCTunnelSpec struct {
	// Port the tunnel server listens on. No output and no other server of the collectors may listen on it.
	// +kubebuilder:default=57401
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port int32 `json:"port,omitempty"`

	// ClientAuth is what the tunnel server asks of a dialing device's certificate when TLS is on (gNMIc's
	// tunnel-server.tls.client-auth): RequireVerify (the default) admits only devices with a certificate from
	// the Cluster's device CA, the Secret <cluster>-tunnel-ca (the operator keeps one device certificate in the
	// Secret <cluster>-tunnel-client-tls); VerifyIfGiven
	// verifies a certificate when one is sent; None asks for none (devices then only verify the server).
	// +kubebuilder:validation:Enum=RequireVerify;VerifyIfGiven;None
	// +kubebuilder:default=RequireVerify
	// +optional
	ClientAuth string `json:"clientAuth,omitempty"`

	// Service tunes the Service <cluster>-tunnel through which devices reach the tunnel server. Expose it
	// outside the cluster with type LoadBalancer or NodePort.
	// +optional
	Service *TunnelServiceSpec `json:"service,omitempty"`
}

// Client authentication modes of the tunnel server (GRPCTunnelSpec.ClientAuth).
const (
	TunnelClientAuthRequireVerify = "RequireVerify"
	TunnelClientAuthVerifyIfGiven = "VerifyIfGiven"
	TunnelClientAuthNone          = "None"
)

// TunnelServiceSpec configures the Service of the collectors' tunnel server.
type TunnelServiceSpec struct {
	// Type of the Service.
	// +kubebuilder:validation:Enum=ClusterIP;NodePort;LoadBalancer
	// +kubebuilder:default=ClusterIP
	// +optional
	Type corev1.ServiceType `json:"type,omitempty"`

	// Annotations added to the Service, for example a cloud load balancer's settings.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`

	// Labels added to the Service. They cannot override the operator's labels (operator.gnmic.dev/*).
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('operator.gnmic.dev/'))",message="service labels must not set operator.gnmic.dev/ labels: the operator owns them"
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// ExternalTrafficPolicy of a LoadBalancer or NodePort Service. Local keeps the devices' source
	// addresses and sends each tunnel to a collector pod on the node it arrived at.
	// +kubebuilder:validation:Enum=Cluster;Local
	// +optional
	ExternalTrafficPolicy corev1.ServiceExternalTrafficPolicy `json:"externalTrafficPolicy,omitempty"`

	// LoadBalancerSourceRanges restricts which client addresses a LoadBalancer Service admits.
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +optional
	LoadBalancerSourceRanges []string `json:"loadBalancerSourceRanges,omitempty"`
}

// TunnelTargetStatus is a device that dialed in and that a collector pod collects through its tunnel.
type TunnelTargetStatus struct {
	// ID the device registered with (the target's name on the collector).
	ID string `json:"id"`
	// Type the device registered with, for example GNMI_GNOI.
	// +optional
	Type string `json:"type,omitempty"`
	// Policy is the TunnelTargetPolicy that matched the device (the first by name, as gNMIc picks it).
	// +optional
	Policy string `json:"policy,omitempty"`
	// Collecting is true when the collector's connection through the tunnel is READY and every subscription
	// runs.
	Collecting bool `json:"collecting"`
	// State is the collector's state of the target (running, failed, ...), with why when it failed.
	// +optional
	State string `json:"state,omitempty"`
}

// MaxTunnelTargetsListed bounds CollectorStatus.TunnelTargets: beyond it a pod's status lists the first ones by
// ID and TunnelTargetsCount still counts them all.
const MaxTunnelTargetsListed = 100
