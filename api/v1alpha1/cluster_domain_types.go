package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterDomain is one failure domain of a Cluster: where its pods run, and how many it may have.
// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas",message="minReplicas must not be above maxReplicas"
type ClusterDomain struct {
	// Name of the domain, for example zone-a. It names the domain's StatefulSet (<cluster>-<name>) and pods,
	// and the domain in domainPolicy and in status.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=30
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +required
	Name string `json:"name"`

	// NodeSelector is added to spec.nodeSelector for the domain's pods; on the same key the domain's value
	// wins. For example topology.kubernetes.io/zone: zone-a.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Affinity of the domain's pods, in place of spec.affinity when set.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// Tolerations of the domain's pods, added to spec.tolerations.
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// MinReplicas the domain always runs, whatever the policy and spec.replicas. Default 0.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinReplicas *int32 `json:"minReplicas,omitempty"`

	// MaxReplicas the domain never exceeds. Unset means no maximum; 0 keeps the domain empty.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxReplicas *int32 `json:"maxReplicas,omitempty"`
}

// ClusterDomainStatus is what a Cluster asks of one domain and what the domain's pods do.
type ClusterDomainStatus struct {
	// Name of the domain.
	Name string `json:"name"`
	// Desired is the replica count of the domain's StatefulSet: its share of spec.replicas plus the
	// replacements it holds.
	// +optional
	Desired int32 `json:"desired"`
	// Current counts the domain's pods that exist and are not terminating.
	// +optional
	Current int32 `json:"current"`
	// Ready counts the domain's pods whose collector runs (containers ready, node not lost).
	// +optional
	Ready int32 `json:"ready"`
	// NotStarted counts the domain's pods that exist but do not run: waiting to be scheduled, starting, or no
	// longer ready.
	// +optional
	NotStarted int32 `json:"notStarted"`
	// NotStartedSince is since when the domain has been waiting for pods to start: from its oldest pod that
	// has not started, kept while any of its pods (or desired pods not created yet) has not started, so that
	// a recreated pod does not restart the startup timeout.
	// +optional
	NotStartedSince *metav1.Time `json:"notStartedSince,omitempty"`
	// Replacements is how many of Desired stand in for replicas that did not start in blocked domains.
	// +optional
	Replacements int32 `json:"replacements,omitempty"`
	// Blocked says that a pod of the domain has waited longer than the fallback's startupTimeout: its
	// replicas that have not started run in the other domains, and it takes no replacements.
	// +optional
	Blocked bool `json:"blocked,omitempty"`
	// Reasons say why Desired is what it is: a maximum reached, a minimum kept, a fallback.
	// +listType=atomic
	// +optional
	Reasons []string `json:"reasons,omitempty"`
}
