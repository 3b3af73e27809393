package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ClusterSpec is the desired fleet of gNMIc collector pods.
// +kubebuilder:validation:XValidation:rule="!has(self.domainPolicy) || has(self.domains)",message="domainPolicy needs domains: it spreads spec.replicas over spec.domains"
// +kubebuilder:validation:XValidation:rule="!has(self.domainPolicy) || !has(self.domainPolicy.priorities) || self.domainPolicy.priorities.targetOrder.all(n, self.domains.exists(d, d.name == n))",message="domainPolicy.priorities.targetOrder must name domains of spec.domains"
// +kubebuilder:validation:XValidation:rule="!has(self.domainPolicy) || !has(self.domainPolicy.proportions) || self.domainPolicy.proportions.targetProportions.all(n, self.domains.exists(d, d.name == n))",message="domainPolicy.proportions.targetProportions must name domains of spec.domains"
type ClusterSpec struct {
	// Image is the gNMIc container image of the collector pods, for example ghcr.io/openconfig/gnmic:0.47.0.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Collector Image",xDescriptors="urn:alm:descriptor:com.tectonic.ui:text"
	Image string `json:"image"`

	// ImagePullPolicy of the collector container.
	// +kubebuilder:validation:Enum=Always;IfNotPresent;Never
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors="urn:alm:descriptor:com.tectonic.ui:imagePullPolicy"
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`

	// ImagePullSecrets used to pull the collector image.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors="urn:alm:descriptor:com.tectonic.ui:advanced"
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`

	// Replicas is the number of collector pods. The HorizontalPodAutoscaler writes it through the scale
	// subresource. 0 stops collection: every target becomes unassigned.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10000
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Collector Pods",xDescriptors="urn:alm:descriptor:com.tectonic.ui:podCount"
	Replicas *int32 `json:"replicas,omitempty"`

	// Domains are failure domains (zones, node pools) the collector pods are spread over: one StatefulSet per
	// domain, <cluster>-<domain>, whose pods <cluster>-<domain>-<ordinal> run on that domain's nodes.
	// spec.replicas is split over them by domainPolicy, and the targets are placed over the pods of every
	// domain together. Without domains the Cluster runs one StatefulSet named after it.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +listType=map
	// +listMapKey=name
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Failure Domains"
	Domains []ClusterDomain `json:"domains,omitempty"`

	// DomainPolicy spreads spec.replicas over the domains, as a Balancer spreads its replicas over its
	// targets: policyName priority (domainPolicy.priorities.targetOrder names domains) or proportional
	// (domainPolicy.proportions.targetProportions maps domain names to shares), and a fallback that runs
	// elsewhere the replicas a domain does not start within startupTimeout. Unset spreads the replicas evenly
	// (proportional, every domain 1) without fallback.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Domain Policy"
	DomainPolicy *BalancerPolicy `json:"domainPolicy,omitempty"`

	// API configures the collector's REST API, through which the operator pushes configuration.
	// +kubebuilder:default={}
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Collector REST API",xDescriptors="urn:alm:descriptor:com.tectonic.ui:advanced"
	API APISpec `json:"api,omitempty"`

	// TargetDistribution tunes how targets are placed on collector pods.
	// +kubebuilder:default={}
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec
	TargetDistribution TargetDistribution `json:"targetDistribution,omitempty"`

	// Resources of the collector container.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors="urn:alm:descriptor:com.tectonic.ui:resourceRequirements"
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`

	// Env adds environment variables to the collector container. gNMIc expands $VAR in its configuration.
	// +kubebuilder:validation:MaxItems=128
	// +listType=map
	// +listMapKey=name
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Environment Variables",xDescriptors="urn:alm:descriptor:com.tectonic.ui:advanced"
	Env []corev1.EnvVar `json:"env,omitempty"`

	// PodLabels are added to every collector pod. They cannot override operator.gnmic.dev/cluster.
	// +kubebuilder:validation:XValidation:rule="!('operator.gnmic.dev/cluster' in self)",message="podLabels must not set operator.gnmic.dev/cluster: the operator owns that label"
	// +kubebuilder:validation:XValidation:rule="!('operator.gnmic.dev/domain' in self)",message="podLabels must not set operator.gnmic.dev/domain: the operator owns that label"
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors="urn:alm:descriptor:com.tectonic.ui:advanced"
	PodLabels map[string]string `json:"podLabels,omitempty"`

	// PodAnnotations are added to every collector pod.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors="urn:alm:descriptor:com.tectonic.ui:advanced"
	PodAnnotations map[string]string `json:"podAnnotations,omitempty"`

	// ServiceAccountName the collector pods run as. Empty uses the namespace's default ServiceAccount. Its API
	// token is not mounted: the collector never calls the Kubernetes API.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Service Account",xDescriptors={"urn:alm:descriptor:io.kubernetes:ServiceAccount","urn:alm:descriptor:com.tectonic.ui:advanced"}
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// PriorityClassName of the collector pods.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Priority Class",xDescriptors={"urn:alm:descriptor:io.kubernetes:scheduling.k8s.io:v1:PriorityClass","urn:alm:descriptor:com.tectonic.ui:advanced"}
	PriorityClassName string `json:"priorityClassName,omitempty"`

	// NodeSelector constrains collector pods to nodes with these labels.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors="urn:alm:descriptor:com.tectonic.ui:advanced"
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Affinity of the collector pods.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors="urn:alm:descriptor:com.tectonic.ui:advanced"
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// Tolerations of the collector pods.
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors="urn:alm:descriptor:com.tectonic.ui:advanced"
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// TopologySpreadConstraints of the collector pods, for example across zones.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors="urn:alm:descriptor:com.tectonic.ui:advanced"
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`

	// PodDisruptionBudget of the collector pods. The operator keeps one while replicas > 1.
	// +kubebuilder:default={}
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors="urn:alm:descriptor:com.tectonic.ui:advanced"
	PodDisruptionBudget PodDisruptionBudgetSpec `json:"podDisruptionBudget,omitempty"`

	// NetworkPolicy admits to the collector pods only the operator, on the REST API port, and the outputs'
	// listening ports. On unless disabled.
	// +kubebuilder:default={}
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors="urn:alm:descriptor:com.tectonic.ui:advanced"
	NetworkPolicy NetworkPolicySpec `json:"networkPolicy,omitempty"`

	// GRPCTunnel runs gNMIc's gRPC tunnel server on every collector pod, for devices that dial in; the
	// Cluster's TunnelTargetPolicies say which of them are collected and how (docs/dial-in.md). Off unless set.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="gRPC Tunnel (dial-in devices)",xDescriptors="urn:alm:descriptor:com.tectonic.ui:advanced"
	GRPCTunnel *GRPCTunnelSpec `json:"grpcTunnel,omitempty"`
}

// APISpec configures the collector's REST API. Mutual TLS is on unless insecure opts out of it.
// +kubebuilder:validation:XValidation:rule="!(has(self.tls) && has(self.insecure))",message="set at most one of tls and insecure: insecure turns the collector API's TLS off"
type APISpec struct {
	// RestPort the collector's REST API listens on.
	// +kubebuilder:default=7890
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	RestPort int32 `json:"restPort,omitempty"`

	// TLS tunes the mutual TLS of the collector REST API, which is on unless insecure is set: collectors
	// serve the API with a certificate from the collector server CA the operator keeps for the Cluster, and
	// accept only certificates of its operator client CA, which issues the operator's and nothing else
	// (docs/security.md, "Certificate roles"). Leaving it out, or tls: {}, keeps the defaults.
	// +optional
	TLS *APITLS `json:"tls,omitempty"`

	// Insecure turns the collector API's TLS off: collectors then serve plain HTTP, and target passwords
	// cross the pod network in clear to any pod that can reach the port. It needs a reason, which the
	// Cluster's APISecured condition and a warning event repeat.
	// +optional
	Insecure *APIInsecure `json:"insecure,omitempty"`

	// GNMI runs the collectors' gNMI server, for downstream systems to subscribe to the collected data
	// (docs/gnmi-server.md). Off unless enabled.
	// +optional
	GNMI *GNMIServerSpec `json:"gnmi,omitempty"`
}

// APITLS configures TLS on the collector REST API.
type APITLS struct {
	// CertificateLifetime of the certificates the operator issues for the Cluster but its CAs: the collectors'
	// serving certificates and the operator's, subscribers' and devices' client certificates. They are renewed
	// when two thirds of it have passed.
	// +kubebuilder:default="2160h"
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$') && duration(self) >= duration('1h')",message="certificateLifetime must be a duration of at least 1h, such as 2160h"
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	CertificateLifetime *metav1.Duration `json:"certificateLifetime,omitempty"`
}

// APIInsecure is the explicit opt-out of TLS on the collector REST API.
type APIInsecure struct {
	// Reason says why the collector REST API runs without TLS, for example "lab fleet, collectors on an
	// isolated network".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[[:space:]]*$')",message="insecure.reason must say why the collector API runs without TLS"
	// +required
	Reason string `json:"reason"`
}

// Condition type and reasons that say whether a Cluster's collector API is protected.
const (
	// ConditionAPISecured is True when the collectors serve their REST API over mutual TLS, False (reason
	// ReasonOptedOut, with spec.api.insecure.reason as its message) when the Cluster opted out.
	ConditionAPISecured = "APISecured"
	// ReasonMutualTLS (APISecured True): collectors accept only the operator's client certificate.
	ReasonMutualTLS = "MutualTLS"
	// ReasonOptedOut (APISecured False): spec.api.insecure turns TLS off.
	ReasonOptedOut = "OptedOut"
)

// NetworkPolicySpec configures the NetworkPolicy the operator keeps for the collector pods.
type NetworkPolicySpec struct {
	// Enabled keeps a NetworkPolicy that admits to the collector pods only the operator's pods, on the REST
	// API port, and outputPeers on the ports the Cluster's outputs listen on. false deletes it.
	// +kubebuilder:default=true
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

	// OutputPeers may reach the ports the Cluster's outputs listen on: a prometheus output's listen port
	// (9804 unless set) and a gnmi output's address port (57400 unless set). Empty admits every source, as
	// a Prometheus in another namespace needs.
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +optional
	OutputPeers []networkingv1.NetworkPolicyPeer `json:"outputPeers,omitempty"`

	// GNMIPeers may reach the collectors' gNMI server (spec.api.gnmi). Empty admits every source; the server's
	// mutual TLS still admits only clients with a certificate from the Cluster's subscriber CA.
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +optional
	GNMIPeers []networkingv1.NetworkPolicyPeer `json:"gnmiPeers,omitempty"`
}

// PodDisruptionBudgetSpec bounds voluntary disruptions of collector pods.
// +kubebuilder:validation:XValidation:rule="!(has(self.minAvailable) && has(self.maxUnavailable))",message="set at most one of minAvailable and maxUnavailable"
type PodDisruptionBudgetSpec struct {
	// Enabled keeps a PodDisruptionBudget while replicas > 1.
	// +kubebuilder:default=true
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

	// MinAvailable collector pods during voluntary disruptions.
	// +optional
	MinAvailable *intstr.IntOrString `json:"minAvailable,omitempty"`

	// MaxUnavailable collector pods during voluntary disruptions. Defaults to 1 when neither is set.
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
}

// ClusterShard is the ownership of a Cluster by one replica of a sharded operator (docs/sharding.md).
type ClusterShard struct {
	// Owner is the identity of the operator replica that reconciles the Cluster: its pod name and a nonce
	// chosen when its process started.
	// +optional
	Owner string `json:"owner,omitempty"`
	// Generation counts takeovers. A replica pushes to the Cluster's collectors only at the generation at
	// which it took the Cluster over; the next owner's takeover increments it.
	// +optional
	Generation int64 `json:"generation,omitempty"`
	// Drained is true once the owner, asked to let the Cluster go, finished its reconcile in flight and
	// closed its collector streams: the next owner may take over.
	// +optional
	Drained bool `json:"drained,omitempty"`
	// Since is when the owner took the Cluster over.
	// +optional
	Since *metav1.Time `json:"since,omitempty"`
}

// ClusterStatus is the observed state of a Cluster.
type ClusterStatus struct {
	// ObservedGeneration is the .metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready, ConfigApplied, CapacityExhausted, APISecured, OutputPortsAvailable and, with a
	// prometheus output that wants one, ServiceMonitors.
	// +listType=map
	// +listMapKey=type
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,xDescriptors="urn:alm:descriptor:io.kubernetes.conditions"
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// ReadyReplicas is the number of ready collector pods.
	// +kubebuilder:default=0
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Ready Collector Pods",xDescriptors="urn:alm:descriptor:com.tectonic.ui:podCount"
	ReadyReplicas int32 `json:"readyReplicas"`

	// Selector is the label selector of the collector pods, for the scale subresource and autoscalers.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Pod Selector",xDescriptors="urn:alm:descriptor:text"
	Selector string `json:"selector"`

	// PipelinesCount is the number of enabled Pipelines that reference this Cluster.
	// +kubebuilder:default=0
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Pipelines",xDescriptors="urn:alm:descriptor:text"
	PipelinesCount int32 `json:"pipelinesCount"`

	// TargetsCount is the number of distinct targets the pipelines select.
	// +kubebuilder:default=0
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Targets",xDescriptors="urn:alm:descriptor:text"
	TargetsCount int32 `json:"targetsCount"`

	// UnassignedTargets is the number of targets no pod could take because every pod is at capacity.
	// +kubebuilder:default=0
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Unassigned Targets",xDescriptors="urn:alm:descriptor:text"
	UnassignedTargets int32 `json:"unassignedTargets"`

	// TunnelTargets is the number of dial-in devices the collector pods run through their tunnel servers
	// (spec.grpcTunnel), summed over status.collectors.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Dial-in Targets",xDescriptors="urn:alm:descriptor:text"
	TunnelTargets int32 `json:"tunnelTargets,omitempty"`

	// TargetUnits is the weight of the targets placement places (selected and not skipped), in the units of
	// podCapacity, plus the dial-in devices (tunnelTargets), one unit each: the Cluster's demand. Equal to
	// targetsCount - skippedTargets + tunnelTargets when the Cluster weighs by Count.
	// +kubebuilder:default=0
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Target Units",xDescriptors="urn:alm:descriptor:text"
	TargetUnits int32 `json:"targetUnits"`

	// UnassignedUnits is the weight of the unassigned targets, in the units of podCapacity. Equal to
	// unassignedTargets when the Cluster weighs by Count.
	// +kubebuilder:default=0
	// +optional
	UnassignedUnits int32 `json:"unassignedUnits"`

	// SkippedTargets is the number of selected targets whose configuration cannot be rendered (a missing
	// Secret or key, a missing profile, …): they are sent to no collector and take no capacity. Each says why
	// in its status.
	// +kubebuilder:default=0
	// +optional
	SkippedTargets int32 `json:"skippedTargets"`

	// SubscriptionsCount is the number of distinct subscriptions the pipelines select.
	// +kubebuilder:default=0
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Subscriptions",xDescriptors="urn:alm:descriptor:text"
	SubscriptionsCount int32 `json:"subscriptionsCount"`

	// InputsCount is the number of distinct inputs the pipelines select.
	// +kubebuilder:default=0
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Inputs",xDescriptors="urn:alm:descriptor:text"
	InputsCount int32 `json:"inputsCount"`

	// OutputsCount is the number of distinct outputs the pipelines select.
	// +kubebuilder:default=0
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Outputs",xDescriptors="urn:alm:descriptor:text"
	OutputsCount int32 `json:"outputsCount"`

	// ProcessorsCount is the number of distinct Processors the Cluster's outputs and inputs apply.
	// +kubebuilder:default=0
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Processors",xDescriptors="urn:alm:descriptor:text"
	ProcessorsCount int32 `json:"processorsCount"`

	// PodCapacity is the per-pod capacity placement used last, in weight units when the Cluster weighs
	// targets: spec.targetDistribution.podCapacity, or the automatic ceil(targets / ready pods) (by weight,
	// the balanced capacity of docs/placement.md).
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Pod Capacity",xDescriptors="urn:alm:descriptor:text"
	PodCapacity int32 `json:"podCapacity,omitempty"`

	// Collectors describes each collector pod: how many targets it acknowledged and which configuration it
	// holds. The operator pushes a pod's configuration again only when it differs from what is recorded here
	// or the pod was recreated.
	// +listType=map
	// +listMapKey=pod
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Collector Pods"
	Collectors []CollectorStatus `json:"collectors,omitempty"`

	// PodStatuses lists the collector pods by state: Ready, Holding (unready, keeping its targets for the
	// grace period), Unavailable (unready past it) and ConfigFailed (ready, but refused its configuration).
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Pod Statuses",xDescriptors="urn:alm:descriptor:com.tectonic.ui:podStatuses"
	PodStatuses map[string][]string `json:"podStatuses,omitempty"`

	// Summary is one line for a list view, for example "3/3 pods ready, 280 targets, 0 unassigned".
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Summary",xDescriptors="urn:alm:descriptor:text"
	Summary string `json:"summary,omitempty"`

	// Domains says, for each of spec.domains, how many replicas it runs and why. Absent without domains.
	// +listType=map
	// +listMapKey=name
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Failure Domains"
	Domains []ClusterDomainStatus `json:"domains,omitempty"`

	// Shard says which operator replica reconciles this Cluster when the operator runs sharded (--sharding):
	// the replica, the ownership generation that fences a replica which lost the Cluster, and whether the
	// owner let it go. Absent when the operator is not sharded.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Operator Replica"
	Shard *ClusterShard `json:"shard,omitempty"`
}

// Condition type and reasons of a Cluster with domains.
const (
	// ConditionDomainFallback is True while a domain's pods have not started within the domain policy's
	// startupTimeout and their replacements run in other domains (reason ReasonStartupTimeout); False with
	// ReasonAllStarted or ReasonFallbackOff otherwise. Only Clusters with domains have it.
	ConditionDomainFallback = "DomainFallback"
	// ConditionDomainsPlaced is True (ReasonAllPlaced) when the domains' limits let the policy place exactly
	// spec.replicas; False with ReasonMinReplicasExceedReplicas or ReasonMaxReplicasReached otherwise.
	ConditionDomainsPlaced = "DomainsPlaced"
)

// Collector pod states in Cluster status.podStatuses.
const (
	PodReady        = "Ready"
	PodHolding      = "Holding"
	PodUnavailable  = "Unavailable"
	PodConfigFailed = "ConfigFailed"
)

// CollectorStatus is the state of one collector pod.
type CollectorStatus struct {
	// Pod is the collector pod's name.
	Pod string `json:"pod"`
	// UID of the pod that acknowledged the configuration; a recreated pod has another UID and is pushed again.
	// +optional
	UID string `json:"uid,omitempty"`
	// Restarts is the collector container's restart count when the pod acknowledged the configuration: a
	// restarted container lost its configuration and is pushed again.
	// +optional
	Restarts int32 `json:"restarts,omitempty"`
	// Ready is the pod's readiness when the status was written.
	// +optional
	Ready bool `json:"ready"`
	// Targets is the number of targets in the configuration the pod acknowledged.
	// +optional
	Targets int32 `json:"targets"`
	// Running is the number of the pod's targets its collector runs, as it last reported them.
	// +optional
	Running int32 `json:"running"`
	// Pending is the number of targets placed on the pod that its collector does not run yet.
	// +optional
	Pending int32 `json:"pending,omitempty"`
	// TargetUnits is the weight of the targets placed on the pod, in the units of status.podCapacity: its
	// load. Equal to the number of targets placed on it when the Cluster weighs by Count.
	// +optional
	TargetUnits int32 `json:"targetUnits,omitempty"`
	// ConfigHash fingerprints the configuration the pod acknowledged: an HMAC-SHA256 keyed with a random key
	// the operator keeps for the Cluster (Secret <cluster>-fingerprint-key), so that it neither reveals nor
	// confirms any password in the configuration.
	// +optional
	ConfigHash string `json:"configHash,omitempty"`
	// LastApplied is when the pod last acknowledged a configuration.
	// +optional
	LastApplied *metav1.Time `json:"lastApplied,omitempty"`
	// Error of the last failed push to this pod; empty once a push succeeds.
	// +optional
	Error string `json:"error,omitempty"`
	// TunnelTargetsCount is the number of dial-in devices the pod's collector runs through its tunnel server
	// (spec.grpcTunnel), as it last reported them. They are not placed by the operator (a device stays on the
	// pod its tunnel reached) and come on top of Targets.
	// +optional
	TunnelTargetsCount int32 `json:"tunnelTargetsCount,omitempty"`
	// TunnelTargets lists those devices, by ID, at most MaxTunnelTargetsListed of them.
	// +kubebuilder:validation:MaxItems=100
	// +listType=map
	// +listMapKey=id
	// +optional
	TunnelTargets []TunnelTargetStatus `json:"tunnelTargets,omitempty"`
	// MissingFeatures are the features of the collector API the operator uses that the pod's collector lacks,
	// as learnt from how it answered (docs/collectors.md has each one's first gNMIc release); empty when it
	// has them all or has not answered yet.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=64
	// +listType=set
	// +optional
	MissingFeatures []string `json:"missingFeatures,omitempty"`
	// AnswersAs is the gNMIc releases whose collector API answers as the pod's collector did, such as
	// "0.44.0 to 0.46.x" or "0.47.0 or newer"; empty until it answered.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	AnswersAs string `json:"answersAs,omitempty"`
}

// Cluster is a fleet of gNMIc collector pods (a StatefulSet) that the operator configures with the targets,
// subscriptions, outputs and inputs its Pipelines select, placing each target on exactly one pod.
//
// +operator-sdk:csv:customresourcedefinitions:displayName="Cluster",resources={{StatefulSet,v1},{Service,v1},{ConfigMap,v1},{Secret,v1},{PodDisruptionBudget,v1},{NetworkPolicy,v1},{Pod,v1}}
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.readyReplicas,selectorpath=.status.selector
// +kubebuilder:resource:categories=gnmic
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.spec.image`
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Pipelines",type=integer,JSONPath=`.status.pipelinesCount`
// +kubebuilder:printcolumn:name="Targets",type=integer,JSONPath=`.status.targetsCount`
// +kubebuilder:printcolumn:name="Unassigned",type=integer,JSONPath=`.status.unassignedTargets`
// +kubebuilder:printcolumn:name="Subs",type=integer,JSONPath=`.status.subscriptionsCount`
// +kubebuilder:printcolumn:name="Inputs",type=integer,JSONPath=`.status.inputsCount`
// +kubebuilder:printcolumn:name="Outputs",type=integer,JSONPath=`.status.outputsCount`
// +kubebuilder:printcolumn:name="Processors",type=integer,JSONPath=`.status.processorsCount`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Operator",type=string,JSONPath=`.status.shard.owner`,priority=1
type Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ClusterSpec `json:"spec"`
	// +optional
	Status ClusterStatus `json:"status,omitempty"`
}

// ClusterList is a list of Clusters.
//
// +kubebuilder:object:root=true
type ClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Cluster `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Cluster{}, &ClusterList{})
}
