package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PipelineSpec selects, for one Cluster, the targets to collect, the subscriptions to apply to them, the
// outputs to send the data to and the inputs to read. Selectors and references add up (union).
// +kubebuilder:validation:XValidation:rule="!(has(self.targetSelectors) || has(self.targetRefs)) || has(self.subscriptionSelectors) || has(self.subscriptionRefs)",message="a pipeline that selects targets needs at least one subscription (subscriptionSelectors or subscriptionRefs): a collector rejects a target without subscriptions"
// +kubebuilder:validation:XValidation:rule="!has(self.inputs) || !(has(self.inputs.inputSelectors) || has(self.inputs.inputRefs)) || (has(self.outputs) && (has(self.outputs.outputSelectors) || has(self.outputs.outputRefs)))",message="a pipeline with inputs needs at least one output: a collector rejects an input without outputs"
type PipelineSpec struct {
	// ClusterRef names the Cluster (in the same namespace) whose collectors run this pipeline.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clusterRef is immutable: create a new Pipeline for another Cluster"
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Cluster",xDescriptors="urn:alm:descriptor:io.kubernetes:operator.gnmic.dev:v1alpha1:Cluster"
	ClusterRef string `json:"clusterRef"`

	// Enabled pipelines are collected; a disabled one keeps its selection but contributes nothing.
	// +kubebuilder:default=true
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors="urn:alm:descriptor:com.tectonic.ui:booleanSwitch"
	Enabled *bool `json:"enabled,omitempty"`

	// TargetSelectors select Targets by label.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec
	TargetSelectors []metav1.LabelSelector `json:"targetSelectors,omitempty"`

	// TargetRefs select Targets by name.
	// +kubebuilder:validation:MaxItems=4096
	// +kubebuilder:validation:items:MaxLength=253
	// +listType=set
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Targets"
	TargetRefs []string `json:"targetRefs,omitempty"`

	// SubscriptionSelectors select Subscriptions by label.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec
	SubscriptionSelectors []metav1.LabelSelector `json:"subscriptionSelectors,omitempty"`

	// SubscriptionRefs select Subscriptions by name.
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=253
	// +listType=set
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Subscriptions"
	SubscriptionRefs []string `json:"subscriptionRefs,omitempty"`

	// Outputs selects the Outputs the pipeline's data goes to.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec
	Outputs *OutputSelection `json:"outputs,omitempty"`

	// Inputs selects the Inputs whose data the pipeline forwards to its outputs.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec
	Inputs *InputSelection `json:"inputs,omitempty"`

	// Labels are added as tags to every update the pipeline collects.
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors="urn:alm:descriptor:com.tectonic.ui:advanced"
	Labels map[string]string `json:"labels,omitempty"`
}

// OutputSelection selects Outputs.
type OutputSelection struct {
	// OutputSelectors select Outputs by label.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	OutputSelectors []metav1.LabelSelector `json:"outputSelectors,omitempty"`
	// OutputRefs select Outputs by name.
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=253
	// +listType=set
	// +optional
	OutputRefs []string `json:"outputRefs,omitempty"`
	// ProcessorRefs name Processors that every Output this pipeline selects applies, in this order, after the
	// Output's own spec.eventProcessors. They apply to everything the Output writes, whichever pipeline's
	// targets it comes from (docs/processors.md).
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	// +listType=set
	// +optional
	ProcessorRefs []string `json:"processorRefs,omitempty"`
	// ProcessorSelectors select Processors by label that every Output this pipeline selects applies after
	// those of processorRefs, sorted by name.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	ProcessorSelectors []metav1.LabelSelector `json:"processorSelectors,omitempty"`
}

// InputSelection selects Inputs.
type InputSelection struct {
	// InputSelectors select Inputs by label.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	InputSelectors []metav1.LabelSelector `json:"inputSelectors,omitempty"`
	// InputRefs select Inputs by name.
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=253
	// +listType=set
	// +optional
	InputRefs []string `json:"inputRefs,omitempty"`
	// ProcessorRefs name Processors that every Input this pipeline selects applies, in this order, after the
	// Input's own spec.eventProcessors (docs/processors.md).
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	// +listType=set
	// +optional
	ProcessorRefs []string `json:"processorRefs,omitempty"`
	// ProcessorSelectors select Processors by label that every Input this pipeline selects applies after
	// those of processorRefs, sorted by name.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	ProcessorSelectors []metav1.LabelSelector `json:"processorSelectors,omitempty"`
}

// PipelineStatus is what the pipeline currently selects.
type PipelineStatus struct {
	// ObservedGeneration is the .metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready (the Cluster exists and the selection resolved), ConfigurationAccepted (the Cluster's
	// collectors take the Outputs and Inputs the pipeline selects).
	// +listType=map
	// +listMapKey=type
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,xDescriptors="urn:alm:descriptor:io.kubernetes.conditions"
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// TargetsCount is the number of Targets selected.
	// +kubebuilder:default=0
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Targets",xDescriptors="urn:alm:descriptor:text"
	TargetsCount int32 `json:"targetsCount"`
	// SubscriptionsCount is the number of Subscriptions selected.
	// +kubebuilder:default=0
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Subscriptions",xDescriptors="urn:alm:descriptor:text"
	SubscriptionsCount int32 `json:"subscriptionsCount"`
	// OutputsCount is the number of Outputs selected.
	// +kubebuilder:default=0
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Outputs",xDescriptors="urn:alm:descriptor:text"
	OutputsCount int32 `json:"outputsCount"`
	// InputsCount is the number of Inputs selected.
	// +kubebuilder:default=0
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Inputs",xDescriptors="urn:alm:descriptor:text"
	InputsCount int32 `json:"inputsCount"`
	// ProcessorsCount is the number of distinct Processors the Outputs and Inputs the pipeline selects
	// apply: their own and the pipeline's.
	// +kubebuilder:default=0
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Processors",xDescriptors="urn:alm:descriptor:text"
	ProcessorsCount int32 `json:"processorsCount"`
}

// ConditionConfigurationAccepted is a Pipeline's condition: True when the collectors of its Cluster take the
// Outputs and Inputs it selects, False (reason ReasonConfigurationRejected) while they refuse a configuration
// one of them is blamed for; the message names the Output or Input and the Cluster.
const ConditionConfigurationAccepted = "ConfigurationAccepted"

// Reasons of the ConfigurationAccepted condition.
const (
	// ReasonConfigurationAccepted: the Cluster's collectors take the Outputs and Inputs the pipeline selects.
	ReasonConfigurationAccepted = "Accepted"
	// ReasonConfigurationRejected: the Cluster's collectors refuse a configuration that an Output or Input the
	// pipeline selects is blamed for (see the Output's or Input's Accepted condition).
	ReasonConfigurationRejected = "ConfigurationRejected"
)

// Pipeline binds targets, subscriptions, outputs and inputs to a Cluster of collectors.
//
// +operator-sdk:csv:customresourcedefinitions:displayName="Pipeline",resources={{Cluster,v1alpha1},{Target,v1alpha1},{Subscription,v1alpha1},{Output,v1alpha1},{Input,v1alpha1},{Processor,v1alpha1}}
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=gnmic
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.clusterRef`
// +kubebuilder:printcolumn:name="Enabled",type=boolean,JSONPath=`.spec.enabled`
// +kubebuilder:printcolumn:name="Targets",type=integer,JSONPath=`.status.targetsCount`
// +kubebuilder:printcolumn:name="Subs",type=integer,JSONPath=`.status.subscriptionsCount`
// +kubebuilder:printcolumn:name="Outputs",type=integer,JSONPath=`.status.outputsCount`
// +kubebuilder:printcolumn:name="Inputs",type=integer,JSONPath=`.status.inputsCount`
// +kubebuilder:printcolumn:name="Processors",type=integer,JSONPath=`.status.processorsCount`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Pipeline struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec PipelineSpec `json:"spec"`
	// +optional
	Status PipelineStatus `json:"status,omitempty"`
}

// PipelineList is a list of Pipelines.
//
// +kubebuilder:object:root=true
type PipelineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Pipeline `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Pipeline{}, &PipelineList{})
}
