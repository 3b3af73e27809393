package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TunnelTargetPolicySpec says which dial-in devices the selected Clusters collect, and how: a device that
// registers over a collector's gRPC tunnel (spec.grpcTunnel of the Cluster) with a type and an ID matching the
// policy's regular expressions becomes a target of that collector, connected with the policy's TargetProfile
// and running its subscriptions. It is rendered as one of gNMIc's tunnel-target-matches, named after the
// policy; when several policies of a Cluster match a device, the one whose name sorts first wins, as gNMIc
// takes the first match by name.
// +kubebuilder:validation:XValidation:rule="size(self.clusterRefs) > 0 || has(self.clusterSelector)",message="set clusterRefs or clusterSelector: a policy must say which Clusters it applies to"
type TunnelTargetPolicySpec struct {
	// ClusterRefs names the Clusters of the policy's namespace it applies to.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=63
	// +listType=set
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec
	ClusterRefs []string `json:"clusterRefs,omitempty"`

	// ClusterSelector selects the Clusters of the policy's namespace it applies to, by label; {} selects all
	// of them. It adds to clusterRefs.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector,omitempty"`

	// Match is what a registering device must announce for the policy to apply.
	// +kubebuilder:default={}
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec
	Match TunnelTargetMatch `json:"match,omitempty"`

	// Profile names the TargetProfile (same namespace) the collector connects to the device with:
	// credentials, TLS, timeouts, encoding, tags.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=spec
	Profile string `json:"profile"`

	// SubscriptionRefs names the Subscriptions (same namespace) the matched devices run. At least one.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	// +listType=set
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=spec
	SubscriptionRefs []string `json:"subscriptionRefs"`

	// OutputRefs names the outputs of the Cluster the matched devices send to; empty sends to every output
	// of the Cluster.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	// +listType=set
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec
	OutputRefs []string `json:"outputRefs,omitempty"`
}

// TunnelTargetMatch is matched against what a device registers with, by RE2 regular expressions searched
// anywhere in the value (gNMIc's regexp.MatchString): anchor them with ^ and $ to match whole values. An empty
// expression matches every value.
type TunnelTargetMatch struct {
	// Type matches the target type the device registers, for example ^GNMI_GNOI$.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Type string `json:"type,omitempty"`

	// ID matches the target ID the device registers, for example ^leaf-[0-9]+$.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	ID string `json:"id,omitempty"`
}

// TunnelTargetPolicyStatus says whether the policy is rendered and where.
type TunnelTargetPolicyStatus struct {
	// ObservedGeneration is the .metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready (True when every Cluster it selects renders it; False with InvalidMatch,
	// ProfileNotFound, SubscriptionNotFound, SecretNotFound or NoClusters) and, while it applies to a Cluster,
	// Running (False with reason CollectorTooOld while collectors of those Clusters answer as a gNMIc release
	// whose tunnel-target-matches match no device; docs/collectors.md).
	// +listType=map
	// +listMapKey=type
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,xDescriptors="urn:alm:descriptor:io.kubernetes.conditions"
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Clusters are the names of the Clusters the policy applies to, sorted.
	// +listType=set
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Clusters"
	Clusters []string `json:"clusters,omitempty"`

	// TunnelTargets is the number of dial-in devices the policy matched that the Clusters' collectors run, as
	// their status reports them.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Dial-in Targets",xDescriptors="urn:alm:descriptor:text"
	TunnelTargets int32 `json:"tunnelTargets,omitempty"`
}

// Reasons of a TunnelTargetPolicy's Ready condition, besides ReasonSecretNotFound (a Secret of its profile).
const (
	ReasonRendered             = "Rendered"
	ReasonInvalidMatch         = "InvalidMatch"
	ReasonProfileNotFound      = "ProfileNotFound"
	ReasonSubscriptionNotFound = "SubscriptionNotFound"
	ReasonNoClusters           = "NoClusters"
)

// TunnelTargetPolicy makes the collectors of the selected Clusters collect the dial-in devices whose
// registered type and ID match, with a TargetProfile and Subscriptions (docs/dial-in.md).
//
// +operator-sdk:csv:customresourcedefinitions:displayName="Tunnel Target Policy",resources={{Cluster,v1alpha1}}
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=gnmic
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.match.type`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.spec.match.id`
// +kubebuilder:printcolumn:name="Profile",type=string,JSONPath=`.spec.profile`
// +kubebuilder:printcolumn:name="Targets",type=integer,JSONPath=`.status.tunnelTargets`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type TunnelTargetPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec TunnelTargetPolicySpec `json:"spec"`
	// +optional
	Status TunnelTargetPolicyStatus `json:"status,omitempty"`
}

// TunnelTargetPolicyList is a list of TunnelTargetPolicies.
//
// +kubebuilder:object:root=true
type TunnelTargetPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TunnelTargetPolicy `json:"items"`
}

func init() {
	SchemeBuilder.Register(&TunnelTargetPolicy{}, &TunnelTargetPolicyList{})
}
