package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TargetSpec is a network device to collect telemetry from.
type TargetSpec struct {
	// Address of the device's gNMI server as host:port: an IPv4 address, a bracketed IPv6 address or a DNS
	// name, then a port from 1 to 65535. For example 10.0.0.1:57400, [2001:db8::1]:6030, leaf1.dc1:9339.
	// +kubebuilder:validation:MaxLength=261
	// +kubebuilder:validation:XValidation:rule="self.matches('^([A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?|\\\\[[0-9A-Fa-f:.]+\\\\]):[0-9]{1,5}$')",message="address must be host:port, for example 10.0.0.1:57400, [2001:db8::1]:6030 or leaf1.dc1:9339"
	// +kubebuilder:validation:XValidation:rule="!self.matches(':[0-9]{1,5}$') || (int(self.substring(self.lastIndexOf(':') + 1)) >= 1 && int(self.substring(self.lastIndexOf(':') + 1)) <= 65535)",message="the port in address must be between 1 and 65535"
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors="urn:alm:descriptor:com.tectonic.ui:text"
	Address string `json:"address"`

	// Profile names the TargetProfile (in the same namespace) with the credentials, TLS and timeouts used
	// to connect to this device.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Target Profile",xDescriptors="urn:alm:descriptor:io.kubernetes:operator.gnmic.dev:v1alpha1:TargetProfile"
	Profile string `json:"profile"`

	// Tags are attached to every update collected from this device (gNMIc event tags).
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors="urn:alm:descriptor:com.tectonic.ui:advanced"
	Tags map[string]string `json:"tags,omitempty"`

	// Weight is what collecting this device costs a collector pod, relative to a typical device (1): a spine
	// streaming thousands of paths every second weighs more than a leaf sending a few counters. A Cluster
	// whose spec.targetDistribution.weighBy is Declared places its targets by weight, and counts its
	// podCapacity in weight units; a Cluster that places by Count ignores it.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors="urn:alm:descriptor:com.tectonic.ui:number"
	Weight int32 `json:"weight,omitempty"`
}

// Where a target's weight in a Cluster comes from (status.clusterStates[].weightSource).
const (
	// WeightSourceDeclared: the weight is the Target's spec.weight.
	WeightSourceDeclared = "Declared"
	// WeightSourceMeasured: the weight follows the target's measured response rate (responseRate).
	WeightSourceMeasured = "Measured"
)

// TargetClusterState is where and how a target is collected within one Cluster.
type TargetClusterState struct {
	// Pod is the collector pod that holds the target; empty while it is unassigned.
	// +optional
	Pod string `json:"pod,omitempty"`

	// LastPod is the collector pod the target belongs on while it is not there: the pod it was taken from
	// because the pod stopped being ready past the grace period, was deleted or was scaled to zero with the
	// rest of the Cluster. The target goes back to it once that pod is ready again and has room, so that a
	// Cluster whose pods all restart ends with the placement it had. Empty while the target is on the pod it
	// belongs on, and once its pod is scaled away for good.
	// +optional
	LastPod string `json:"lastPod,omitempty"`

	// State of the target's placement: Assigned (its pod's collector runs it), Pending (placed on a pod whose
	// collector does not run it yet), Unassigned (every pod was at capacity), Orphaned (its pod stopped
	// being ready and keeps it for the grace period) or Skipped (its configuration cannot be rendered, for
	// example its credentials Secret is missing; the message says what is wrong).
	// +kubebuilder:validation:Enum=Assigned;Pending;Unassigned;Orphaned;Skipped
	// +optional
	State string `json:"state,omitempty"`

	// Weight is what the target weighs in this Cluster's placement, in the units of the Cluster's
	// podCapacity. Absent when the Cluster places by count (spec.targetDistribution.weighBy Count), where
	// every target weighs 1.
	// +optional
	Weight int32 `json:"weight,omitempty"`

	// WeightSource says where weight comes from: Declared (the Target's spec.weight) or Measured (it follows
	// responseRate, once measured, when the Cluster weighs by Measured). Absent with weight.
	// +optional
	WeightSource string `json:"weightSource,omitempty"`

	// ResponseRate is the rate of subscribe responses the target's collectors counted, per second, averaged
	// over the Cluster's measuredWeights.window (for example "12.5"); set while the Cluster weighs by
	// Measured and the target is measured.
	// +optional
	ResponseRate string `json:"responseRate,omitempty"`

	// ConnectionState of the gNMI connection as the collector reports it: IDLE, CONNECTING, READY,
	// TRANSIENT_FAILURE, SHUTDOWN, or empty when unknown.
	// +optional
	ConnectionState string `json:"connectionState,omitempty"`

	// Collecting is true when the collector delivers the target's telemetry: its connection is READY and
	// every one of its subscriptions runs. A READY connection alone is not enough (a device may end a
	// subscription's stream and keep the connection).
	// +optional
	Collecting bool `json:"collecting,omitempty"`

	// Message says why the target is not collecting: which subscription stopped and why, why its start
	// failed, or what a Pending target waits for. Empty while it collects, except for a target whose
	// subscription the collector shows stopped while its response counter keeps rising (a Cluster weighing
	// by Measured, docs/placement.md): collecting, and the message says so.
	// +optional
	Message string `json:"message,omitempty"`

	// LastUpdated is when this entry last changed.
	// +optional
	LastUpdated metav1.Time `json:"lastUpdated,omitempty"`
}

// TargetStatus is where the target is collected.
type TargetStatus struct {
	// ClusterStates is keyed by the name of each Cluster whose Pipelines select this target.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Placement per Cluster"
	ClusterStates map[string]TargetClusterState `json:"clusterStates,omitempty"`

	// Clusters is the number of Clusters that hold the target on a pod.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Clusters Collecting",xDescriptors="urn:alm:descriptor:text"
	Clusters int32 `json:"clusters,omitempty"`

	// State summarises clusterStates: Assigned when every Cluster holds it, otherwise the worst state.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,xDescriptors="urn:alm:descriptor:io.kubernetes.phase"
	State string `json:"state,omitempty"`
}

// Target is a network device (a gNMI server) that collectors stream telemetry from.
//
// +operator-sdk:csv:customresourcedefinitions:displayName="Target",resources={{Pod,v1},{TargetProfile,v1alpha1}}
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=gnmic
// +kubebuilder:printcolumn:name="Address",type=string,JSONPath=`.spec.address`
// +kubebuilder:printcolumn:name="Profile",type=string,JSONPath=`.spec.profile`
// +kubebuilder:printcolumn:name="Clusters",type=integer,JSONPath=`.status.clusters`
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Weight",type=integer,JSONPath=`.spec.weight`,priority=1
type Target struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec TargetSpec `json:"spec"`
	// +optional
	Status TargetStatus `json:"status,omitempty"`
}

// TargetList is a list of Targets.
//
// +kubebuilder:object:root=true
type TargetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Target `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Target{}, &TargetList{})
}
