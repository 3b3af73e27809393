package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BalancerSpec is a total of replicas to spread over several scale targets by a policy.
// +kubebuilder:validation:XValidation:rule="!has(self.policy.priorities) || self.policy.priorities.targetOrder.all(n, self.targets.exists(t, t.name == n))",message="policy.priorities.targetOrder must name targets of spec.targets"
// +kubebuilder:validation:XValidation:rule="!has(self.policy.proportions) || self.policy.proportions.targetProportions.all(n, self.targets.exists(t, t.name == n))",message="policy.proportions.targetProportions must name targets of spec.targets"
// +kubebuilder:validation:XValidation:rule="self.targets.all(t, self.targets.exists_one(u, u.scaleTargetRef.kind == t.scaleTargetRef.kind && u.scaleTargetRef.name == t.scaleTargetRef.name))",message="two targets must not scale the same workload: each scaleTargetRef (kind and name) appears once"
type BalancerSpec struct {
	// Targets are the workloads the replicas are spread over: Deployments, StatefulSets, ReplicaSets, Clusters or
	// any kind with the scale subresource, in the Balancer's namespace.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +listType=map
	// +listMapKey=name
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=spec
	Targets []BalancerTarget `json:"targets"`

	// Replicas is the total the targets run together. A HorizontalPodAutoscaler writes it through the scale
	// subresource. The targets' minReplicas are kept even when they add up to more.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Replicas",xDescriptors="urn:alm:descriptor:com.tectonic.ui:podCount"
	Replicas *int32 `json:"replicas,omitempty"`

	// Selector selects the pods of every target, and only those. It becomes status.selector, through which an
	// autoscaler of the Balancer finds the pods whose metrics it averages. When it is left out, status.selector
	// is what the targets' own selectors have in common (a Deployment per zone labelled app=collector and
	// zone=a or zone=b gives app=collector), which may select other pods too.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors="urn:alm:descriptor:com.tectonic.ui:selector:core:v1:Pod"
	Selector *metav1.LabelSelector `json:"selector,omitempty"`

	// Policy decides how the replicas above the targets' minimums are spread.
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=spec
	Policy BalancerPolicy `json:"policy"`
}

// BalancerTarget is one workload the Balancer scales.
// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas",message="minReplicas must not be above maxReplicas"
type BalancerTarget struct {
	// Name identifies the target in the policy and in status, for example zone-a.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +required
	Name string `json:"name"`

	// ScaleTargetRef points to the workload, in the Balancer's namespace. Its kind must have the scale
	// subresource, and the operator must be allowed to get and update it (docs/balancer.md#permissions).
	// +required
	ScaleTargetRef ScaleTargetReference `json:"scaleTargetRef"`

	// MinReplicas the target always gets, whatever the policy and the total. Default 0.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinReplicas *int32 `json:"minReplicas,omitempty"`

	// MaxReplicas the target never exceeds. Unset means no maximum; 0 keeps the target empty.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxReplicas *int32 `json:"maxReplicas,omitempty"`
}

// ScaleTargetReference names a workload with the scale subresource, as a HorizontalPodAutoscaler's
// scaleTargetRef does.
type ScaleTargetReference struct {
	// APIVersion of the workload, for example apps/v1 or operator.gnmic.dev/v1alpha1. Required: where a
	// HorizontalPodAutoscaler's scaleTargetRef leaves it out, it means the core API group, which has no
	// Deployments, StatefulSets or ReplicaSets.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	APIVersion string `json:"apiVersion"`
	// Kind of the workload, for example Deployment.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	Kind string `json:"kind"`
	// Name of the workload.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
}

// BalancerPolicyName names a Balancer policy.
// +kubebuilder:validation:Enum=priority;proportional
type BalancerPolicyName string

// The Balancer policies.
const (
	// BalancerPriority fills the targets in policy.priorities.targetOrder, each up to its maxReplicas.
	BalancerPriority BalancerPolicyName = "priority"
	// BalancerProportional spreads the replicas by policy.proportions.targetProportions.
	BalancerProportional BalancerPolicyName = "proportional"
)

// BalancerPolicy decides how replicas are spread, and what happens to replicas that do not start. Its fields
// are named as in the Kubernetes Balancer KEP (policyName, priorities, proportions), so that a Balancer
// written from the KEP applies unchanged; before they were name, priority and proportional.
// +kubebuilder:validation:XValidation:rule="!has(self.policyName) || (self.policyName == 'priority') == has(self.priorities)",message="policy.priorities is set when, and only when, policy.policyName is priority"
// +kubebuilder:validation:XValidation:rule="!has(self.policyName) || (self.policyName == 'proportional') == has(self.proportions)",message="policy.proportions is set when, and only when, policy.policyName is proportional"
type BalancerPolicy struct {
	// PolicyName is the policy: priority (its settings in priorities) or proportional (its settings in
	// proportions).
	// +required
	PolicyName BalancerPolicyName `json:"policyName"`

	// Priorities holds the priority policy's settings (the targets fill one after the other); set when, and
	// only when, policyName is priority.
	// +optional
	Priorities *PriorityPolicy `json:"priorities,omitempty"`

	// Proportions holds the proportional policy's settings (the replicas are spread by shares); set when, and
	// only when, policyName is proportional.
	// +optional
	Proportions *ProportionalPolicy `json:"proportions,omitempty"`

	// Fallback replaces replicas that do not start in time with replicas in other targets. Without it,
	// replicas that do not start are waited for.
	// +optional
	Fallback *BalancerFallback `json:"fallback,omitempty"`
}

// PriorityPolicy fills the targets in order.
type PriorityPolicy struct {
	// TargetOrder lists target names, the first to fill first: it gets replicas up to its maxReplicas, then
	// the next one does, and so on. A target left out of the list gets its minReplicas only.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=63
	// +listType=set
	// +required
	TargetOrder []string `json:"targetOrder"`
}

// ProportionalPolicy spreads replicas by proportions.
// +kubebuilder:validation:XValidation:rule="self.targetProportions.all(n, self.targetProportions[n] >= 0)",message="targetProportions must not be negative"
// +kubebuilder:validation:XValidation:rule="self.targetProportions.exists(n, self.targetProportions[n] > 0)",message="at least one of targetProportions must be above 0"
type ProportionalPolicy struct {
	// TargetProportions maps target names to their share: the replicas above the minimums are spread so that
	// the largest difference between a target's replicas and its share of the total is smallest. A target
	// at its maxReplicas drops out and the others share the rest by their proportions. A target left out, or
	// with proportion 0, gets its minReplicas only.
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=32
	// +required
	TargetProportions map[string]int32 `json:"targetProportions"`
}

// BalancerFallback says when a replica that has not started counts as missing.
type BalancerFallback struct {
	// StartupTimeout is how long a target's oldest not-started pod may wait (to be scheduled, to run, to
	// become ready) before the target's replicas that have not started are replaced in the other targets.
	// The replacements go once the target's pods have started.
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$') && duration(self) > duration('0s')",message="startupTimeout must be a positive duration such as 5m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +required
	StartupTimeout metav1.Duration `json:"startupTimeout"`
}

// BalancerStatus is what the Balancer saw and did last.
type BalancerStatus struct {
	// ObservedGeneration is the .metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Replicas counts the pods of every target that exist and are not terminating, started or not: the
	// current replicas an autoscaler of the Balancer reads through the scale subresource.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Pods",xDescriptors="urn:alm:descriptor:com.tectonic.ui:podCount"
	Replicas int32 `json:"replicas"`

	// ReadyReplicas counts the pods of every target that are ready.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Ready Pods",xDescriptors="urn:alm:descriptor:com.tectonic.ui:podCount"
	ReadyReplicas int32 `json:"readyReplicas"`

	// Selector is the label selector of the targets' pods (spec.selector, or what the targets' selectors have
	// in common), in the string form the scale subresource serves to autoscalers.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Pod Selector",xDescriptors="urn:alm:descriptor:text"
	Selector string `json:"selector,omitempty"`

	// Targets says, for each target, what the Balancer asks of it, what its pods do and why.
	// +listType=map
	// +listMapKey=name
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status
	Targets []BalancerTargetStatus `json:"targets,omitempty"`

	// Conditions: Balanced, ReplicasPlaced, FallbackActive.
	// +listType=map
	// +listMapKey=type
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,xDescriptors="urn:alm:descriptor:io.kubernetes.conditions"
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// BalancerTargetStatus is the state of one target.
type BalancerTargetStatus struct {
	// Name of the target.
	Name string `json:"name"`
	// Desired is the replica count the Balancer gives the target's scale subresource. Absent when the
	// Balancer leaves the target alone (it is missing, has no scale subresource, or another autoscaler scales
	// it: reasons say which).
	// +optional
	Desired *int32 `json:"desired,omitempty"`
	// Current counts the target's pods that exist and are not terminating.
	// +optional
	Current int32 `json:"current"`
	// Ready counts the target's pods that are ready.
	// +optional
	Ready int32 `json:"ready"`
	// NotStarted counts the target's pods that exist but are not ready: waiting to be scheduled, starting,
	// or no longer ready.
	// +optional
	NotStarted int32 `json:"notStarted"`
	// NotStartedSince is when the longest-waiting of the NotStarted pods began to wait: its creation, or when
	// it stopped being ready.
	// +optional
	NotStartedSince *metav1.Time `json:"notStartedSince,omitempty"`
	// Replacements is how many of Desired stand in for replicas that did not start in other targets.
	// +optional
	Replacements int32 `json:"replacements,omitempty"`
	// Blocked says that a pod of the target has waited longer than the fallback's startupTimeout: its
	// replicas that have not started are replaced in the other targets, and it takes no replacements.
	// +optional
	Blocked bool `json:"blocked,omitempty"`
	// Reasons say why Desired is what it is (a maximum reached, a minimum kept, a fallback), or why the
	// Balancer leaves the target alone.
	// +listType=atomic
	// +optional
	Reasons []string `json:"reasons,omitempty"`
}

// Condition types of a Balancer.
const (
	// ConditionBalanced is True when the Balancer gave every target what the policy asks; False when it left
	// a target alone or a write failed (the reason says why, the message names the targets).
	ConditionBalanced = "Balanced"
	// ConditionReplicasPlaced is True when the targets' limits let the policy place exactly spec.replicas;
	// False when their minimums add up to more, or their maximums to less.
	ConditionReplicasPlaced = "ReplicasPlaced"
	// ConditionFallbackActive is True while some target's pods have not started within the startup timeout
	// and their replacements run elsewhere.
	ConditionFallbackActive = "FallbackActive"
)

// Condition reasons of a Balancer.
const (
	// ReasonBalanced (Balanced True): every target holds what the policy asks.
	ReasonBalanced = "Balanced"
	// ReasonTargetMissing (Balanced False): a scaleTargetRef names an object, or a kind, that does not exist.
	ReasonTargetMissing = "TargetMissing"
	// ReasonNoScaleSubresource (Balanced False): a target's kind has no scale subresource.
	ReasonNoScaleSubresource = "NoScaleSubresource"
	// ReasonScaleForbidden (Balanced False): the operator may not get or update a target's scale subresource;
	// docs/balancer.md#permissions says what to grant.
	ReasonScaleForbidden = "ScaleForbidden"
	// ReasonScaledByOtherHPA (Balanced False): a HorizontalPodAutoscaler scales a target itself; the Balancer
	// leaves that target alone rather than fight it.
	ReasonScaledByOtherHPA = "ScaledByOtherHPA"
	// ReasonScaleFailed (Balanced False): reading or writing a target's scale subresource failed otherwise.
	ReasonScaleFailed = "ScaleFailed"
	// ReasonInvalidSelector (Balanced False): spec.selector is not a valid label selector; status.selector is
	// empty, so an autoscaler of the Balancer cannot act.
	ReasonInvalidSelector = "InvalidSelector"
	// ReasonCannotBalance (Balanced False): the targets left cannot be balanced, for example when every target
	// with a proportion above 0 is left alone.
	ReasonCannotBalance = "CannotBalance"

	// ReasonAllPlaced (ReplicasPlaced True): the targets run exactly spec.replicas (plus replacements).
	ReasonAllPlaced = "AllPlaced"
	// ReasonMinReplicasExceedReplicas (ReplicasPlaced False): the targets' minReplicas add up to more than
	// spec.replicas; every target runs its minimum.
	ReasonMinReplicasExceedReplicas = "MinReplicasExceedReplicas"
	// ReasonMaxReplicasReached (ReplicasPlaced False): every target the policy may grow is at its maxReplicas;
	// the message says how many replicas found no room.
	ReasonMaxReplicasReached = "MaxReplicasReached"

	// ReasonStartupTimeout (FallbackActive True): pods of a target have not started within the startup
	// timeout; the message names the targets and where the replacements run.
	ReasonStartupTimeout = "StartupTimeout"
	// ReasonAllStarted (FallbackActive False): no target's pods waited longer than the startup timeout.
	ReasonAllStarted = "AllStarted"
	// ReasonFallbackOff (FallbackActive False): the policy has no fallback; replicas that do not start are
	// waited for.
	ReasonFallbackOff = "FallbackOff"
)

// Event reasons a user sees in `kubectl describe balancer`.
const (
	// EventBalancerScaled: the Balancer wrote a target's scale; the message says from what, to what and why.
	EventBalancerScaled = "Scaled"
	// EventFallbackStarted: a target's pods have not started within the startup timeout; its replicas that
	// have not started are replaced in the other targets.
	EventFallbackStarted = "FallbackStarted"
	// EventFallbackEnded: a blocked target's pods started; its replacements go.
	EventFallbackEnded = "FallbackEnded"
	// EventNotBalanced: the Balancer leaves a target alone, cannot write it or cannot balance at all.
	EventNotBalanced = "NotBalanced"
	// EventBalanced: every target holds what the policy gives it again.
	EventBalanced = "Balanced"
	// EventReplicasNotPlaced: the targets' limits do not let the policy place exactly spec.replicas.
	EventReplicasNotPlaced = "ReplicasNotPlaced"
)

// Balancer keeps a number of replicas spread over several workloads (one per zone, or spot and on-demand
// pools) by a policy, writing each one's scale subresource, and replaces replicas that do not start in one
// workload with replicas in the others. A HorizontalPodAutoscaler scales the Balancer through its own scale
// subresource.
//
// +operator-sdk:csv:customresourcedefinitions:displayName="Balancer",resources={{Deployment,v1},{StatefulSet,v1},{ReplicaSet,v1},{Cluster,v1alpha1},{Pod,v1},{HorizontalPodAutoscaler,v2}}
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:categories=gnmic
// +kubebuilder:printcolumn:name="Policy",type=string,JSONPath=`.spec.policy.policyName`
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Current",type=integer,JSONPath=`.status.replicas`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Balanced",type=string,JSONPath=`.status.conditions[?(@.type=="Balanced")].status`
// +kubebuilder:printcolumn:name="Fallback",type=string,JSONPath=`.status.conditions[?(@.type=="FallbackActive")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Balancer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec BalancerSpec `json:"spec"`
	// +optional
	Status BalancerStatus `json:"status,omitempty"`
}

// BalancerList is a list of Balancers.
//
// +kubebuilder:object:root=true
type BalancerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Balancer `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Balancer{}, &BalancerList{})
}
