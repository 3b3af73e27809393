package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OutputSpec is a destination for collected telemetry.
type OutputSpec struct {
	// Type of the gNMIc output.
	// +kubebuilder:validation:Enum=file;kafka;prometheus;prometheus_write;nats;jetstream;influxdb;tcp;udp;otlp;gnmi;snmp;clickhouse
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors={"urn:alm:descriptor:com.tectonic.ui:select:file","urn:alm:descriptor:com.tectonic.ui:select:kafka","urn:alm:descriptor:com.tectonic.ui:select:prometheus","urn:alm:descriptor:com.tectonic.ui:select:prometheus_write","urn:alm:descriptor:com.tectonic.ui:select:nats","urn:alm:descriptor:com.tectonic.ui:select:jetstream","urn:alm:descriptor:com.tectonic.ui:select:influxdb","urn:alm:descriptor:com.tectonic.ui:select:tcp","urn:alm:descriptor:com.tectonic.ui:select:udp","urn:alm:descriptor:com.tectonic.ui:select:otlp","urn:alm:descriptor:com.tectonic.ui:select:gnmi","urn:alm:descriptor:com.tectonic.ui:select:snmp","urn:alm:descriptor:com.tectonic.ui:select:clickhouse"}
	Type string `json:"type"`

	// Config is the gNMIc configuration of this output type, passed through as is (see the gNMIc
	// documentation of the type). The operator sets its type, name and event-processors, overriding any in
	// config.
	// +kubebuilder:validation:MaxProperties=128
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Configuration"
	Config map[string]apiextensionsv1.JSON `json:"config,omitempty"`

	// SecretRefs set values of config from Secrets of the namespace, so that credentials need not be written
	// in the Output: each names a key of config and the Secret key holding its value, which replaces any value
	// config has there. While a Secret or key is missing the Output is sent to no collector, with the targets
	// that send to it, and its SecretsResolved condition says what is missing.
	// +kubebuilder:validation:MaxItems=32
	// +listType=map
	// +listMapKey=key
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Values from Secrets"
	SecretRefs []ConfigSecretRef `json:"secretRefs,omitempty"`

	// EventProcessors are the names of Processors of the namespace that the output applies, in this order, to
	// every event it writes; those of the Pipelines that select it follow (docs/processors.md has the order).
	// While one does not exist the Output is sent to no collector, with the targets that send to it, and its
	// ProcessorsResolved condition names the missing one.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	// +listType=set
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Event Processors"
	EventProcessors []string `json:"eventProcessors,omitempty"`

	// Service configures what a prometheus output publishes on each Cluster that sends to it: a container port,
	// a Service and a ServiceMonitor (docs/outputs.md). Outputs of other types ignore it.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Service"
	Service *OutputServiceSpec `json:"service,omitempty"`
}

// ConfigSecretRef sets one value of an Output's or Input's config from a Secret.
// +kubebuilder:validation:XValidation:rule="!(self.key in ['type', 'name', 'outputs', 'event-processors'])",message="the operator sets type, name, outputs and event-processors: a secretRef cannot"
type ConfigSecretRef struct {
	// Key of config the value is set at. Dots separate nested keys: "password", or "sasl.password" for the
	// password key of the sasl object.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9_-]+([.][A-Za-z0-9_-]+)*$')",message="key must be config keys separated by dots, such as password or sasl.password"
	// +required
	Key string `json:"key"`

	// SecretKeyRef names the Secret, in the namespace of the Output or Input, and the key of its data that
	// holds the value. The value is sent as a string.
	// +required
	SecretKeyRef SecretKeyReference `json:"secretKeyRef"`
}

// SecretKeyReference names one key of a Secret in the same namespace.
type SecretKeyReference struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
	// Key of the Secret's data.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Key string `json:"key"`
}

// ConditionSecretsResolved is a condition type of Outputs and Inputs with spec.secretRefs: True when every
// value was set from its Secret, False while one cannot be (reason ReasonSecretNotFound,
// ReasonSecretKeyMissing or ReasonInvalidSecretRef); the object is then sent to no collector, with the targets
// and inputs that send to it, and the message names what is missing.
const ConditionSecretsResolved = "SecretsResolved"

// Reasons of the SecretsResolved condition.
const (
	ReasonSecretsResolved  = "Resolved"
	ReasonSecretNotFound   = "SecretNotFound"
	ReasonSecretKeyMissing = "SecretKeyMissing"
	// ReasonInvalidSecretRef: a secretRef's key goes through a value of spec.config that is not an object.
	ReasonInvalidSecretRef = "InvalidSecretRef"
)

// ConditionTemplatesSupported is a condition type of Outputs whose spec.config has a target-template or a
// msg-template: True when both parse with the functions gNMIc 0.46.0 and newer define, False (reason
// ReasonGomplateRemoved) while one calls a function gNMIc 0.46.0 removed with gomplate (strings.ToUpper,
// data.ToJSON, …; a collector of 0.46.0 or newer refuses it, an older one may take it), False (reason
// ReasonInvalidTemplate) while one does not parse at all. The Output is sent either way: the collectors'
// answer is its Accepted condition. docs/outputs.md lists the functions that remain.
const ConditionTemplatesSupported = "TemplatesSupported"

// Reasons of the TemplatesSupported condition.
const (
	ReasonTemplatesSupported = "TemplatesSupported"
	ReasonGomplateRemoved    = "GomplateRemoved"
	ReasonInvalidTemplate    = "InvalidTemplate"
)

// OutputStatus says whether the collectors take the Output.
type OutputStatus struct {
	// ObservedGeneration is the .metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Accepted (no Cluster's collectors refuse a configuration this Output is blamed for),
	// Running (no collector that holds it failed to start it, or is too old for it: reason CollectorTooOld),
	// with spec.secretRefs SecretsResolved, with event processors ProcessorsResolved, for an Output that
	// listens (prometheus, gnmi) PortAvailable, and with a target-template or msg-template TemplatesSupported.
	// +listType=map
	// +listMapKey=type
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,xDescriptors="urn:alm:descriptor:io.kubernetes.conditions"
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// RejectedBy are the Clusters whose collectors refuse a configuration this Output is blamed for, each
	// with the collectors' error. Each Cluster keeps its own entry; Accepted is False while any is present.
	// +kubebuilder:validation:MaxItems=64
	// +listType=map
	// +listMapKey=cluster
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status
	RejectedBy []ConfigurationRejection `json:"rejectedBy,omitempty"`

	// FailedOn are the Clusters whose collectors took this Output and could not start it, each with the pods
	// and the collectors' reason. Each Cluster keeps its own entry while its collectors report the Output
	// failed; Running is False while any is present.
	// +kubebuilder:validation:MaxItems=64
	// +listType=map
	// +listMapKey=cluster
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status
	FailedOn []ComponentFailure `json:"failedOn,omitempty"`

	// PortConflicts are the Clusters on which the Output's listening port is taken already (by an Output created
	// earlier, the collectors' REST API or their gNMI server), each with what takes it. The Output is sent to
	// no collector of those Clusters; PortAvailable is False while any is present.
	// +kubebuilder:validation:MaxItems=64
	// +listType=map
	// +listMapKey=cluster
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status
	PortConflicts []ConfigurationRejection `json:"portConflicts,omitempty"`
}

// ComponentFailure is one Cluster's collector pods that hold an Output or Input they could not start: the
// collector answered the configuration 200, kept its targets running, and sends nothing to (or reads nothing
// from) this object.
type ComponentFailure struct {
	// Cluster is the name of the Cluster (in the same namespace) whose collectors report the failure.
	// +kubebuilder:validation:MaxLength=253
	// +required
	Cluster string `json:"cluster"`
	// Pods are the collector pods that report it failed, sorted (the first 16 when there are more).
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=253
	// +optional
	Pods []string `json:"pods,omitempty"`
	// PodCount is how many collector pods report it failed.
	// +optional
	PodCount int32 `json:"podCount,omitempty"`
	// Reason is the collectors' failed-reason (distinct reasons of several pods joined by "; ").
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	Reason string `json:"reason,omitempty"`
	// CollectorTooOld is true when the pods' collectors lack what the object needs (its type, or the state
	// streams that tell whether it runs): Reason names the gNMIc release that has it (docs/collectors.md).
	// +optional
	CollectorTooOld bool `json:"collectorTooOld,omitempty"`
}

// ConditionRunning is a condition type of Outputs and Inputs: True when every collector that holds the
// object started it, False (reason ReasonFailedOnCollectors) while the collectors of a Cluster report it
// failed to start (status.failedOn names the pods and the reason). It is set once a Cluster sends the object.
const ConditionRunning = "Running"

// Reasons of the Running condition.
const (
	// ReasonRunningOnCollectors: no collector that holds the object reports it failed.
	ReasonRunningOnCollectors = "Running"
	// ReasonFailedOnCollectors: collectors took the object (the apply was answered 200) and could not start
	// it; their targets keep running, and nothing reaches the object from them.
	ReasonFailedOnCollectors = "FailedOnCollectors"
	// ReasonCollectorTooOld (well_known.go): the collectors of a Cluster that sends the object answer as a gNMIc
	// release that lacks its type, or the state streams that tell whether it runs.
)

// ConfigurationRejection is one Cluster's refusal of a configuration an Output or Input is blamed for.
type ConfigurationRejection struct {
	// Cluster is the name of the Cluster (in the same namespace) whose collectors refuse it.
	// +kubebuilder:validation:MaxLength=253
	// +required
	Cluster string `json:"cluster"`
	// Message is the collectors' error, and why this object is blamed.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	Message string `json:"message,omitempty"`
}

// ConditionAccepted is the condition type of Outputs and Inputs: True when the collectors of every Cluster
// that uses the object take the configuration holding it, False (reason ReasonRejectedByCollectors) while
// the collectors of a Cluster refuse a configuration the object is blamed for; the message names the
// Cluster and quotes the collectors' error.
const ConditionAccepted = "Accepted"

// Reasons of the Accepted condition.
const (
	// ReasonAcceptedByCollectors: no Cluster's collectors refuse a configuration holding the object.
	ReasonAcceptedByCollectors = "Accepted"
	// ReasonRejectedByCollectors: the collectors of a Cluster refuse the configuration every pod receives
	// (outputs, inputs, processors), and the object is blamed for it: the collectors' error names it, or it
	// changed since the collectors last accepted that part, or (when neither tells) it is part of it.
	ReasonRejectedByCollectors = "RejectedByCollectors"
)

// Output is a telemetry destination (Prometheus, Kafka, NATS, a file, …) that Pipelines send data to.
//
// +operator-sdk:csv:customresourcedefinitions:displayName="Output",resources={{Pod,v1}}
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=gnmic
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="Accepted",type=string,JSONPath=`.status.conditions[?(@.type=="Accepted")].status`
// +kubebuilder:printcolumn:name="Running",type=string,JSONPath=`.status.conditions[?(@.type=="Running")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Output struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec OutputSpec `json:"spec"`
	// +optional
	Status OutputStatus `json:"status,omitempty"`
}

// OutputList is a list of Outputs.
//
// +kubebuilder:object:root=true
type OutputList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Output `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Output{}, &OutputList{})
}
