package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OutputSpec is a destination for collected telemetry.
type OutputSpec struct {
	// Type of the gNMIc output.
	// +kubebuilder:validation:Enum=file;kafka;prometheus;prometheus_write;nats;jetstream;influxdb;tcp;udp;otlp;gnmi
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors={"urn:alm:descriptor:com.tectonic.ui:select:file","urn:alm:descriptor:com.tectonic.ui:select:kafka","urn:alm:descriptor:com.tectonic.ui:select:prometheus","urn:alm:descriptor:com.tectonic.ui:select:prometheus_write","urn:alm:descriptor:com.tectonic.ui:select:nats","urn:alm:descriptor:com.tectonic.ui:select:jetstream","urn:alm:descriptor:com.tectonic.ui:select:influxdb","urn:alm:descriptor:com.tectonic.ui:select:tcp","urn:alm:descriptor:com.tectonic.ui:select:udp","urn:alm:descriptor:com.tectonic.ui:select:otlp","urn:alm:descriptor:com.tectonic.ui:select:gnmi"}
	Type string `json:"type"`

	// Config is the gNMIc configuration of this output type, passed through as is (see the gNMIc
	// documentation of the type). The operator sets its type and name, overriding any in config.
	// +kubebuilder:validation:MaxProperties=128
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Configuration"
	Config map[string]apiextensionsv1.JSON `json:"config,omitempty"`
}

// Output is a telemetry destination (Prometheus, Kafka, NATS, a file, …) that Pipelines send data to.
//
// +operator-sdk:csv:customresourcedefinitions:displayName="Output",resources={{Pod,v1}}
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=gnmic
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Output struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec OutputSpec `json:"spec"`
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
