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
	ClusterRef string `json:"clusterRef"`

	// Enabled pipelines are collected; a disabled one keeps its selection but contributes nothing.
	// +kubebuilder:default=true
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

	// TargetSelectors select Targets by label.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	TargetSelectors []metav1.LabelSelector `json:"targetSelectors,omitempty"`

	// TargetRefs select Targets by name.
	// +kubebuilder:validation:MaxItems=4096
	// +kubebuilder:validation:items:MaxLength=253
	// +listType=set
	// +optional
	TargetRefs []string `json:"targetRefs,omitempty"`

	// SubscriptionSelectors select Subscriptions by label.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	SubscriptionSelectors []metav1.LabelSelector `json:"subscriptionSelectors,omitempty"`

	// SubscriptionRefs select Subscriptions by name.
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=253
	// +listType=set
	// +optional
	SubscriptionRefs []string `json:"subscriptionRefs,omitempty"`

	// Outputs selects the Outputs the pipeline's data goes to.
	// +optional
	Outputs *OutputSelection `json:"outputs,omitempty"`

	// Inputs selects the Inputs whose data the pipeline forwards to its outputs.
	// +optional
	Inputs *InputSelection `json:"inputs,omitempty"`

	// Labels are added as tags to every update the pipeline collects.
	// +kubebuilder:validation:MaxProperties=64
	// +optional
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
}

// PipelineStatus is what the pipeline currently selects.
type PipelineStatus struct {
	// ObservedGeneration is the .metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready (the Cluster exists and the selection resolved).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// TargetsCount is the number of Targets selected.
	// +optional
	TargetsCount int32 `json:"targetsCount"`
	// SubscriptionsCount is the number of Subscriptions selected.
	// +optional
	SubscriptionsCount int32 `json:"subscriptionsCount"`
	// OutputsCount is the number of Outputs selected.
	// +optional
	OutputsCount int32 `json:"outputsCount"`
	// InputsCount is the number of Inputs selected.
	// +optional
	InputsCount int32 `json:"inputsCount"`
}

// Pipeline binds targets, subscriptions, outputs and inputs to a Cluster of collectors.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=gnmic
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.clusterRef`
// +kubebuilder:printcolumn:name="Enabled",type=boolean,JSONPath=`.spec.enabled`
// +kubebuilder:printcolumn:name="Targets",type=integer,JSONPath=`.status.targetsCount`
// +kubebuilder:printcolumn:name="Subs",type=integer,JSONPath=`.status.subscriptionsCount`
// +kubebuilder:printcolumn:name="Outputs",type=integer,JSONPath=`.status.outputsCount`
// +kubebuilder:printcolumn:name="Inputs",type=integer,JSONPath=`.status.inputsCount`
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
