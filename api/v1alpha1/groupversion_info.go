// Package v1alpha1 holds the operator.gnmic.dev/v1alpha1 API: a Cluster of gNMIc collector pods and the
// telemetry model that feeds it (Targets, TargetProfiles, Subscriptions, Outputs, Inputs) tied together by
// Pipelines.
//
// +kubebuilder:object:generate=true
// +groupName=operator.gnmic.dev
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "operator.gnmic.dev", Version: "v1alpha1"}

	// SchemeBuilder registers the kinds of this package with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the kinds of this package to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
