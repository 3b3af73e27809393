package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TargetDistribution tunes target placement.
type TargetDistribution struct {
	// PodCapacity is the most targets one collector pod holds, in weight units when weighBy is not Count (a
	// target of weight 1 is one unit). Unset means automatic: the targets spread evenly, ceil(targets / pods)
	// per pod (by weight: the even share of the total weight, a little more so that the heaviest target
	// fits). Set it when an autoscaler sizes the fleet: targets beyond replicas × podCapacity stay
	// unassigned and are reported, which is the signal to scale up.
	// +kubebuilder:validation:Minimum=1
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Pod Capacity",xDescriptors="urn:alm:descriptor:com.tectonic.ui:number"
	PodCapacity *int32 `json:"podCapacity,omitempty"`

	// UnreadyGracePeriod is how long a collector pod that stopped being ready keeps its targets before they
	// are placed elsewhere. It rides out rolling restarts without moving targets.
	// +kubebuilder:default="60s"
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$')",message="unreadyGracePeriod must be a duration such as 60s or 2m"
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	UnreadyGracePeriod *metav1.Duration `json:"unreadyGracePeriod,omitempty"`

	// WeighBy is what a target weighs in placement. Count (the default): every target weighs 1, and
	// podCapacity counts targets. Declared: a target weighs its spec.weight, pods are filled by weight, and
	// podCapacity, status.podCapacity and the units figures of the status count weight units
	// (docs/placement.md). Measured: as Declared, but a target's weight follows the rate of responses its
	// collector counts, relative to the Cluster's typical target (measuredWeights).
	// +kubebuilder:default=Count
	// +kubebuilder:validation:Enum=Count;Declared;Measured
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Weigh Targets By",xDescriptors="urn:alm:descriptor:com.tectonic.ui:select:Count,urn:alm:descriptor:com.tectonic.ui:select:Declared,urn:alm:descriptor:com.tectonic.ui:select:Measured"
	WeighBy string `json:"weighBy,omitempty"`

	// MeasuredWeights tunes how weights are measured when weighBy is Measured; ignored otherwise.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Measured Weights",xDescriptors="urn:alm:descriptor:com.tectonic.ui:advanced"
	MeasuredWeights *MeasuredWeights `json:"measuredWeights,omitempty"`
}

// MeasuredWeights tunes measured weights (docs/placement.md, "Measured weights"). Every field has a default.
// +kubebuilder:validation:XValidation:rule="!has(self.window) || duration(self.window) > duration('0s')",message="window must be a positive duration"
// +kubebuilder:validation:XValidation:rule="!has(self.hysteresis) || duration(self.hysteresis) > duration('0s')",message="hysteresis must be a positive duration"
type MeasuredWeights struct {
	// Window is how far back a target's response rate is averaged; a target is measured once its
	// collectors' counters span half of it. Default 5m.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	Window *metav1.Duration `json:"window,omitempty"`
	// Hysteresis is how long a target's rate must stay outside its weight's band (1.5 powers of two either
	// side) before its weight follows. Default 10m.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	Hysteresis *metav1.Duration `json:"hysteresis,omitempty"`
	// MaxWeight caps a measured weight: a target that many times as busy as the typical one, or busier,
	// weighs MaxWeight. Default 64.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	MaxWeight int32 `json:"maxWeight,omitempty"`
}

// How a Cluster weighs its targets in placement (spec.targetDistribution.weighBy).
const (
	// WeighByCount: every target weighs 1.
	WeighByCount = "Count"
	// WeighByDeclared: every target weighs its spec.weight.
	WeighByDeclared = "Declared"
	// WeighByMeasured: a target weighs what its collector measures, its spec.weight until measured.
	WeighByMeasured = "Measured"
)
