package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// InputSpec is a source of telemetry other than gNMI targets: a message bus another collector writes to.
type InputSpec struct {
	// Type of the gNMIc input.
	// +kubebuilder:validation:Enum=kafka;nats;jetstream
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors={"urn:alm:descriptor:com.tectonic.ui:select:kafka","urn:alm:descriptor:com.tectonic.ui:select:nats","urn:alm:descriptor:com.tectonic.ui:select:jetstream"}
	Type string `json:"type"`

	// Config is the gNMIc configuration of this input type, passed through as is. The operator sets its
	// type, name, outputs (from the Pipeline) and event-processors, overriding any in config.
	// +kubebuilder:validation:MaxProperties=128
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Configuration"
	Config map[string]apiextensionsv1.JSON `json:"config,omitempty"`

	// SecretRefs set values of config from Secrets of the namespace, as those of an Output do.
	// +kubebuilder:validation:MaxItems=32
	// +listType=map
	// +listMapKey=key
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Values from Secrets"
	SecretRefs []ConfigSecretRef `json:"secretRefs,omitempty"`

	// EventProcessors are the names of Processors of the namespace that the input applies, in this order, to
	// every event it reads before passing it to its outputs; those of the Pipelines that select it follow
	// (docs/processors.md has the order). While one does not exist the Input is sent to no collector, and its
	// ProcessorsResolved condition names the missing one.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	// +listType=set
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Event Processors"
	EventProcessors []string `json:"eventProcessors,omitempty"`
}

// InputStatus says whether the collectors take the Input.
type InputStatus struct {
	// ObservedGeneration is the .metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Accepted (no Cluster's collectors refuse a configuration this Input is blamed for),
	// Running (no collector that holds it failed to start it, or is too old for it: reason CollectorTooOld), with spec.secretRefs SecretsResolved, and with
	// event processors ProcessorsResolved.
	// +listType=map
	// +listMapKey=type
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,xDescriptors="urn:alm:descriptor:io.kubernetes.conditions"
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// RejectedBy are the Clusters whose collectors refuse a configuration this Input is blamed for, each
	// with the collectors' error. Each Cluster keeps its own entry; Accepted is False while any is present.
	// +kubebuilder:validation:MaxItems=64
	// +listType=map
	// +listMapKey=cluster
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status
	RejectedBy []ConfigurationRejection `json:"rejectedBy,omitempty"`

	// FailedOn are the Clusters whose collectors took this Input and could not start it, each with the pods
	// and the collectors' reason. Running is False while any is present.
	// +kubebuilder:validation:MaxItems=64
	// +listType=map
	// +listMapKey=cluster
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status
	FailedOn []ComponentFailure `json:"failedOn,omitempty"`
}

// Input is a telemetry source read by collectors (for example a Kafka topic) and forwarded to the outputs
// of the Pipelines that select it.
//
// +operator-sdk:csv:customresourcedefinitions:displayName="Input",resources={{Pod,v1}}
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=gnmic
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="Accepted",type=string,JSONPath=`.status.conditions[?(@.type=="Accepted")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Input struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec InputSpec `json:"spec"`
	// +optional
	Status InputStatus `json:"status,omitempty"`
}

// InputList is a list of Inputs.
//
// +kubebuilder:object:root=true
type InputList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Input `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Input{}, &InputList{})
}
