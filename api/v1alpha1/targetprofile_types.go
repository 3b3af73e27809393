package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TargetProfileSpec is how collectors connect to the Targets that name this profile.
type TargetProfileSpec struct {
	// CredentialsRef names a Secret in the profile's namespace holding the keys username and password, or
	// token. The operator reads it and sends the values only to the collector pod that holds the target.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Credentials Secret",xDescriptors="urn:alm:descriptor:io.kubernetes:Secret"
	CredentialsRef string `json:"credentialsRef,omitempty"`

	// TLS of the gNMI connection. Without it the connection is plain text (gNMIc "insecure").
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="TLS"
	TLS *TargetTLS `json:"tls,omitempty"`

	// Timeout of a connection attempt. A collector dials with this timeout; gNMIc has no default for
	// pushed targets, so one is always sent.
	// +kubebuilder:default="10s"
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$') && duration(self) > duration('0s')",message="timeout must be a positive duration such as 10s"
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors="urn:alm:descriptor:com.tectonic.ui:text"
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// RetryTimer is the wait between connection attempts.
	// +kubebuilder:default="10s"
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$') && duration(self) >= duration('2s')",message="retryTimer must be a duration of at least 2s, such as 10s"
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors="urn:alm:descriptor:com.tectonic.ui:text"
	RetryTimer *metav1.Duration `json:"retryTimer,omitempty"`

	// Encoding of gNMI notifications requested from the device.
	// +kubebuilder:validation:Enum=JSON;BYTES;PROTO;ASCII;JSON_IETF
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors={"urn:alm:descriptor:com.tectonic.ui:select:JSON","urn:alm:descriptor:com.tectonic.ui:select:BYTES","urn:alm:descriptor:com.tectonic.ui:select:PROTO","urn:alm:descriptor:com.tectonic.ui:select:ASCII","urn:alm:descriptor:com.tectonic.ui:select:JSON_IETF"}
	Encoding string `json:"encoding,omitempty"`

	// Gzip compresses the gRPC stream.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors="urn:alm:descriptor:com.tectonic.ui:booleanSwitch"
	Gzip bool `json:"gzip,omitempty"`

	// Proxy is a SOCKS5 proxy (host:port) to reach the devices through.
	// +kubebuilder:validation:MaxLength=261
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="SOCKS5 Proxy",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text","urn:alm:descriptor:com.tectonic.ui:advanced"}
	Proxy string `json:"proxy,omitempty"`

	// Tags are attached to every update from the targets of this profile.
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors="urn:alm:descriptor:com.tectonic.ui:advanced"
	Tags map[string]string `json:"tags,omitempty"`

	// TCPKeepalive interval of the connection.
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$')",message="tcpKeepalive must be a duration such as 30s"
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="TCP Keepalive",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text","urn:alm:descriptor:com.tectonic.ui:advanced"}
	TCPKeepalive *metav1.Duration `json:"tcpKeepalive,omitempty"`

	// GRPCKeepalive of the connection.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="gRPC Keepalive",xDescriptors="urn:alm:descriptor:com.tectonic.ui:advanced"
	GRPCKeepalive *GRPCKeepalive `json:"grpcKeepalive,omitempty"`
}

// TargetTLS configures TLS towards the devices.
// +kubebuilder:validation:XValidation:rule="!has(self.minVersion) || !has(self.maxVersion) || self.minVersion <= self.maxVersion",message="tls.minVersion must not be above tls.maxVersion"
// +kubebuilder:validation:XValidation:rule="!(has(self.skipVerify) && self.skipVerify && has(self.secretRef))",message="tls.skipVerify and tls.secretRef exclude each other: a CA is useless when verification is skipped"
type TargetTLS struct {
	// SkipVerify accepts any server certificate. Use it only in labs.
	// +optional
	SkipVerify bool `json:"skipVerify,omitempty"`

	// SecretRef names a Secret in the profile's namespace with ca.crt (to verify the device) and optionally
	// tls.crt and tls.key (a client certificate).
	// +kubebuilder:validation:MaxLength=253
	// +optional
	SecretRef string `json:"secretRef,omitempty"`

	// ServerName overrides the name verified in the device's certificate.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ServerName string `json:"serverName,omitempty"`

	// MinVersion of TLS.
	// +kubebuilder:validation:Enum="1.1";"1.2";"1.3"
	// +optional
	MinVersion string `json:"minVersion,omitempty"`

	// MaxVersion of TLS.
	// +kubebuilder:validation:Enum="1.1";"1.2";"1.3"
	// +optional
	MaxVersion string `json:"maxVersion,omitempty"`

	// CipherSuites allowed, by their Go names.
	// +kubebuilder:validation:MaxItems=32
	// +listType=set
	// +optional
	CipherSuites []string `json:"cipherSuites,omitempty"`
}

// GRPCKeepalive configures gRPC keepalive pings.
type GRPCKeepalive struct {
	// Time between pings.
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$')",message="grpcKeepalive.time must be a duration such as 30s"
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	Time *metav1.Duration `json:"time,omitempty"`
	// Timeout waiting for a ping acknowledgement.
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$')",message="grpcKeepalive.timeout must be a duration such as 10s"
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	Timeout *metav1.Duration `json:"timeout,omitempty"`
	// PermitWithoutStream sends pings even without an active stream.
	// +optional
	PermitWithoutStream bool `json:"permitWithoutStream,omitempty"`
}

// TargetProfile holds the connection settings shared by many Targets: credentials, TLS, timeouts.
//
// +operator-sdk:csv:customresourcedefinitions:displayName="Target Profile",resources={{Secret,v1}}
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=gnmic
// +kubebuilder:printcolumn:name="Credentials",type=string,JSONPath=`.spec.credentialsRef`
// +kubebuilder:printcolumn:name="Timeout",type=string,JSONPath=`.spec.timeout`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type TargetProfile struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec TargetProfileSpec `json:"spec,omitempty"`
}

// TargetProfileList is a list of TargetProfiles.
//
// +kubebuilder:object:root=true
type TargetProfileList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TargetProfile `json:"items"`
}

func init() {
	SchemeBuilder.Register(&TargetProfile{}, &TargetProfileList{})
}
