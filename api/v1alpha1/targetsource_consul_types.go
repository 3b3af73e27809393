package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MappingPresetConsul maps the instances of Consul services: one Target per instance (docs/target-sources-consul.md).
const MappingPresetConsul = "consul"

// ConsulInventory reads the devices from Consul's service catalog: every instance of the named services is a
// record (node, addresses, port, tags, service and node metadata). docs/target-sources-consul.md shows a record
// and the consul mapping preset.
// +kubebuilder:validation:XValidation:rule="!has(self.tls) || self.address.startsWith('https://')",message="tls needs an https:// address"
// +kubebuilder:validation:XValidation:rule="!has(self.tls) || !has(self.tls.insecureSkipVerify) || !self.tls.insecureSkipVerify || !has(self.tls.caRef)",message="tls.insecureSkipVerify and tls.caRef exclude each other: a CA is useless when verification is skipped"
type ConsulInventory struct {
	// Address of Consul's HTTP API: host:port (plain HTTP) or an http:// or https:// URL, for example
	// https://consul-server.consul.svc:8501.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="self.matches('^(https?://)?[^/?#@\\\\s]+/?$')",message="address must be host:port or an http:// or https:// URL without a path"
	// +required
	Address string `json:"address"`

	// Datacenter whose catalog is read. Empty: the datacenter of the agent at address.
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_-]+$`
	// +optional
	Datacenter string `json:"datacenter,omitempty"`

	// Services whose instances are the devices, by service name.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^[A-Za-z0-9][A-Za-z0-9_.-]*$`
	// +listType=set
	// +required
	Services []string `json:"services"`

	// Tags an instance must all carry to be read (Consul's tag filter), for example gnmi.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	// +listType=set
	// +optional
	Tags []string `json:"tags,omitempty"`

	// Filter is a Consul filter expression that Consul applies to the catalog's entries, for example
	// NodeMeta.site == "ams1" and ServiceMeta.vendor != "legacy". A filter Consul rejects fails the sync
	// with Consul's message.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	Filter string `json:"filter,omitempty"`

	// NodeMetaLabels are keys of the nodes' metadata copied into each record's labels (record.labels), which
	// the consul preset puts on the Target: a node with site=ams1 gives its Targets the label site=ams1. A
	// node without the key gives no label.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:Pattern=`^[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$`
	// +listType=set
	// +optional
	NodeMetaLabels []string `json:"nodeMetaLabels,omitempty"`

	// TokenSecretRef names the Secret, in the TargetSource's namespace, and its key holding the Consul ACL
	// token sent with every request. It needs service:read on the services and node:read on their nodes.
	// +optional
	TokenSecretRef *SecretKeyReference `json:"tokenSecretRef,omitempty"`

	// TLS verifies Consul's certificate (an https:// address) and presents a client certificate when Consul
	// asks for one (verify_incoming). Without it the system's CAs verify Consul.
	// +optional
	TLS *ConsulTLS `json:"tls,omitempty"`

	// Interval between two syncs. At least 10s.
	// +kubebuilder:default="1m"
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$') && duration(self) >= duration('10s')",message="interval must be a duration of at least 10s, such as 1m"
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	Interval *metav1.Duration `json:"interval,omitempty"`

	// Timeout of one whole sync: every service read.
	// +kubebuilder:default="30s"
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$') && duration(self) >= duration('1s') && duration(self) <= duration('30m')",message="timeout must be a duration from 1s to 30m, such as 30s"
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	Timeout *metav1.Duration `json:"timeout,omitempty"`
}

// ConsulTLS is how the operator and Consul's HTTPS API trust each other.
type ConsulTLS struct {
	// CARef names the PEM CA bundle that verifies Consul's certificate, instead of the system's CAs.
	// +optional
	CARef *CABundleReference `json:"caRef,omitempty"`

	// ServerName overrides the name verified in Consul's certificate, for example server.dc1.consul.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ServerName string `json:"serverName,omitempty"`

	// InsecureSkipVerify accepts any certificate. Off by default; use it only in labs.
	// +optional
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`

	// ClientCertSecretName names a Secret of type kubernetes.io/tls (keys tls.crt and tls.key) in the
	// TargetSource's namespace: the client certificate presented to Consul.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ClientCertSecretName string `json:"clientCertSecretName,omitempty"`
}
