package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SubscriptionSpec is a gNMI subscription: which paths to stream from the targets and how.
// +kubebuilder:validation:XValidation:rule="!has(self.sampleInterval) || !has(self.mode) || self.mode in ['STREAM', 'STREAM/SAMPLE', 'STREAM/TARGET_DEFINED']",message="sampleInterval applies only to the modes STREAM, STREAM/SAMPLE and STREAM/TARGET_DEFINED"
// +kubebuilder:validation:XValidation:rule="!has(self.heartbeatInterval) || !has(self.mode) || self.mode.startsWith('STREAM')",message="heartbeatInterval applies only to STREAM modes"
// +kubebuilder:validation:XValidation:rule="!has(self.streamSubscriptions) || !has(self.paths)",message="set either paths or streamSubscriptions, not both"
// +kubebuilder:validation:XValidation:rule="has(self.paths) || has(self.streamSubscriptions)",message="a subscription needs at least one path (or streamSubscriptions)"
// +kubebuilder:validation:XValidation:rule="!has(self.history)",fieldPath=".history",message="history is not supported: gNMIc's REST API cannot carry history times and the collector would refuse its whole configuration; remove history and query past data with gnmic subscribe --history-snapshot (or --history-start and --history-end) outside the operator"
type SubscriptionSpec struct {
	// Paths to subscribe to, in gNMI path syntax, for example /interfaces/interface/state/counters.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=1024
	// +listType=atomic
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec
	Paths []string `json:"paths,omitempty"`

	// Prefix common to every path.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors="urn:alm:descriptor:com.tectonic.ui:text"
	Prefix string `json:"prefix,omitempty"`

	// Target is the gNMI target field of the prefix (for devices that multiplex several targets).
	// +kubebuilder:validation:MaxLength=253
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="gNMI Target",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text","urn:alm:descriptor:com.tectonic.ui:advanced"}
	Target string `json:"target,omitempty"`

	// Mode of the subscription. Unset, like STREAM, it streams with the target-defined stream mode: the device
	// chooses sample or on-change per path.
	// +kubebuilder:validation:Enum=ONCE;POLL;STREAM;STREAM/SAMPLE;STREAM/ON_CHANGE;STREAM/TARGET_DEFINED
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors={"urn:alm:descriptor:com.tectonic.ui:select:ONCE","urn:alm:descriptor:com.tectonic.ui:select:POLL","urn:alm:descriptor:com.tectonic.ui:select:STREAM","urn:alm:descriptor:com.tectonic.ui:select:STREAM/SAMPLE","urn:alm:descriptor:com.tectonic.ui:select:STREAM/ON_CHANGE","urn:alm:descriptor:com.tectonic.ui:select:STREAM/TARGET_DEFINED"}
	Mode string `json:"mode,omitempty"`

	// SampleInterval of sampled streams.
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$')",message="sampleInterval must be a duration such as 10s"
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors="urn:alm:descriptor:com.tectonic.ui:text"
	SampleInterval *metav1.Duration `json:"sampleInterval,omitempty"`

	// HeartbeatInterval forces an update at least this often even when nothing changed.
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$')",message="heartbeatInterval must be a duration such as 60s"
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors="urn:alm:descriptor:com.tectonic.ui:text"
	HeartbeatInterval *metav1.Duration `json:"heartbeatInterval,omitempty"`

	// Encoding of the notifications.
	// +kubebuilder:validation:Enum=JSON;BYTES;PROTO;ASCII;JSON_IETF
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors={"urn:alm:descriptor:com.tectonic.ui:select:JSON","urn:alm:descriptor:com.tectonic.ui:select:BYTES","urn:alm:descriptor:com.tectonic.ui:select:PROTO","urn:alm:descriptor:com.tectonic.ui:select:ASCII","urn:alm:descriptor:com.tectonic.ui:select:JSON_IETF"}
	Encoding string `json:"encoding,omitempty"`

	// UpdatesOnly skips the initial snapshot of the data.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors="urn:alm:descriptor:com.tectonic.ui:booleanSwitch"
	UpdatesOnly bool `json:"updatesOnly,omitempty"`

	// SuppressRedundant asks the device not to resend unchanged values.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors="urn:alm:descriptor:com.tectonic.ui:booleanSwitch"
	SuppressRedundant bool `json:"suppressRedundant,omitempty"`

	// Qos is the DSCP marking requested, 0 to 63.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=63
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="QoS (DSCP)",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number","urn:alm:descriptor:com.tectonic.ui:advanced"}
	Qos *int32 `json:"qos,omitempty"`

	// Depth limits the depth of returned subtrees (gNMI depth extension); 0 is unlimited.
	// +kubebuilder:validation:Minimum=0
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number","urn:alm:descriptor:com.tectonic.ui:advanced"}
	Depth int32 `json:"depth,omitempty"`

	// StreamSubscriptions splits one subscription into several with their own mode and intervals.
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors="urn:alm:descriptor:com.tectonic.ui:advanced"
	StreamSubscriptions []StreamSubscription `json:"streamSubscriptions,omitempty"`

	// History would request historical data (gNMI history extension), but the API server refuses it: gNMIc's
	// REST API cannot carry history times, and a collector refuses its whole configuration when one subscription
	// has them. The field is kept so that objects written with the gNMIc operator's field names still decode;
	// query past data with gnmic subscribe --history-snapshot (or --history-start and --history-end) instead.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors="urn:alm:descriptor:com.tectonic.ui:advanced"
	History *SubscriptionHistory `json:"history,omitempty"`
}

// StreamSubscription is one member of a multi-mode stream subscription.
type StreamSubscription struct {
	// Paths of this member.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=256
	// +listType=atomic
	// +required
	Paths []string `json:"paths"`
	// StreamMode of this member.
	// +kubebuilder:validation:Enum=SAMPLE;ON_CHANGE;TARGET_DEFINED
	// +optional
	StreamMode string `json:"streamMode,omitempty"`
	// SampleInterval of this member.
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$')",message="streamSubscriptions sampleInterval must be a duration such as 10s"
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	SampleInterval *metav1.Duration `json:"sampleInterval,omitempty"`
	// HeartbeatInterval of this member.
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$')",message="streamSubscriptions heartbeatInterval must be a duration such as 60s"
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	HeartbeatInterval *metav1.Duration `json:"heartbeatInterval,omitempty"`
}

// SubscriptionHistory selects historical data: a snapshot at one time, or a range. Subscriptions may not set it
// (see SubscriptionSpec.History).
type SubscriptionHistory struct {
	// Snapshot time.
	// +optional
	Snapshot *metav1.Time `json:"snapshot,omitempty"`
	// Start of the range.
	// +optional
	Start *metav1.Time `json:"start,omitempty"`
	// End of the range.
	// +optional
	End *metav1.Time `json:"end,omitempty"`
}

// Subscription is a gNMI subscription applied to the targets of the Pipelines that select it.
//
// +operator-sdk:csv:customresourcedefinitions:displayName="Subscription",resources={{Pod,v1}}
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=gnmic
// +kubebuilder:printcolumn:name="Mode",type=string,JSONPath=`.spec.mode`
// +kubebuilder:printcolumn:name="Sample",type=string,JSONPath=`.spec.sampleInterval`
// +kubebuilder:printcolumn:name="Encoding",type=string,JSONPath=`.spec.encoding`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Subscription struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec SubscriptionSpec `json:"spec"`
}

// SubscriptionList is a list of Subscriptions.
//
// +kubebuilder:object:root=true
type SubscriptionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Subscription `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Subscription{}, &SubscriptionList{})
}
