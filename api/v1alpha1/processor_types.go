package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ProcessorSpec is one gNMIc event processor: a step that transforms, enriches or drops the events an Output
// writes or an Input reads. Outputs and Inputs name the Processors they apply, in order (spec.eventProcessors),
// and Pipelines add theirs (spec.outputs.processorRefs, …); docs/processors.md has the order.
type ProcessorSpec struct {
	// Type of the gNMIc event processor: every event-* type the collector registers
	// (github.com/openconfig/gnmic, pkg/formatters). event-plugin is not one: plugins register their own
	// names from files on the collector, which the operator does not ship.
	// +kubebuilder:validation:Enum=event-add-tag;event-allow;event-combine;event-convert;event-data-convert;event-date-string;event-delete;event-drop;event-duration-convert;event-extract-tags;event-group-by;event-ieeefloat32;event-jq;event-merge;event-override-ts;event-rate-limit;event-starlark;event-strings;event-time-epoch;event-to-tag;event-trigger;event-value-tag;event-value-tag-v2;event-write
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Type"
	Type string `json:"type"`

	// Config is the gNMIc configuration of this processor type, passed through as is (see the gNMIc
	// documentation of the type): the collector receives {type: config}, so config holds the type's settings
	// themselves (event-convert's own "type" key included), never the type as a key. The operator checks what
	// the collector would fail on (docs/processors.md): an event-* key at the top of config (the gNMIc
	// configuration file's form, an event-strings key holding the settings, written under config), an
	// event-starlark without exactly one of script and source, an event-combine without processors. Such a
	// Processor is sent to no collector, with the Outputs and Inputs that apply it, and its InUse condition
	// says why. (The API server cannot check this: its validation rules cannot read a schemaless object.)
	// +kubebuilder:validation:MaxProperties=128
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Configuration"
	Config map[string]apiextensionsv1.JSON `json:"config,omitempty"`
}

// ProcessorUse is what one Cluster applies a Processor to.
type ProcessorUse struct {
	// Cluster is the name of the Cluster (in the same namespace).
	// +kubebuilder:validation:MaxLength=253
	// +required
	Cluster string `json:"cluster"`
	// Outputs are the names of the Cluster's Outputs that apply the Processor, sorted.
	// +kubebuilder:validation:MaxItems=256
	// +listType=atomic
	// +optional
	Outputs []string `json:"outputs,omitempty"`
	// Inputs are the names of the Cluster's Inputs that apply the Processor, sorted.
	// +kubebuilder:validation:MaxItems=256
	// +listType=atomic
	// +optional
	Inputs []string `json:"inputs,omitempty"`
}

// ProcessorStatus says where the Processor is applied.
type ProcessorStatus struct {
	// ObservedGeneration is the .metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: InUse (True while an Output or Input a Cluster sends applies the Processor) and Running (no
	// collector reports an Output or Input failed to start because of this Processor).
	// +listType=map
	// +listMapKey=type
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,xDescriptors="urn:alm:descriptor:io.kubernetes.conditions"
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// UsedBy are the Clusters whose collectors apply the Processor, each with the Outputs and Inputs that do.
	// Each Cluster keeps its own entry.
	// +kubebuilder:validation:MaxItems=64
	// +listType=map
	// +listMapKey=cluster
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status
	UsedBy []ProcessorUse `json:"usedBy,omitempty"`

	// FailedOn are the Clusters whose collectors could not start an Output or Input because of this Processor
	// (the collector's reason names it), each with the pods and the reason. Running is False while any is
	// present.
	// +kubebuilder:validation:MaxItems=64
	// +listType=map
	// +listMapKey=cluster
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status
	FailedOn []ComponentFailure `json:"failedOn,omitempty"`
}

// ConditionInUse is the condition type of Processors: True while the Outputs or Inputs of a Cluster apply the
// Processor (status.usedBy names them), False (reason ReasonNotUsed) while none does. A Processor no Output,
// Input or Pipeline names is sent to no collector.
const ConditionInUse = "InUse"

// Reasons of the InUse condition.
const (
	ReasonUsed    = "Used"
	ReasonNotUsed = "NotUsed"
	// ReasonInvalidProcessor: the Processor's config is one the collector fails on; it is sent to no
	// collector, with the Outputs and Inputs that apply it.
	ReasonInvalidProcessor = "InvalidProcessor"
)

// ConditionProcessorsResolved is a condition type of Outputs and Inputs whose event processors (their own
// spec.eventProcessors and those their Pipelines add) are not empty: True when every one exists, False (reason
// ReasonProcessorNotFound) while one does not, or (ReasonInvalidProcessor) while one has a config the collector
// fails on; the object is then sent to no collector, with the targets and inputs that send to it, and the
// message names the Processor.
const ConditionProcessorsResolved = "ProcessorsResolved"

// Reasons of the ProcessorsResolved condition.
const (
	ReasonProcessorsResolved = "Resolved"
	ReasonProcessorNotFound  = "ProcessorNotFound"
)

// Processor is a gNMIc event processor (event-strings, event-drop, event-add-tag, …) that Outputs, Inputs and
// Pipelines apply, in order, to the telemetry events.
//
// +operator-sdk:csv:customresourcedefinitions:displayName="Processor",resources={{Pod,v1}}
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=gnmic
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="In Use",type=string,JSONPath=`.status.conditions[?(@.type=="InUse")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Processor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ProcessorSpec `json:"spec"`
	// +optional
	Status ProcessorStatus `json:"status,omitempty"`
}

// ProcessorList is a list of Processors.
//
// +kubebuilder:object:root=true
type ProcessorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Processor `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Processor{}, &ProcessorList{})
}
