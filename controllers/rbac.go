// Package controllers holds the reconcilers. Each reads state from the cache, calls a pure core
// (internal/placement, …) and writes the result back; the decisions live in the cores.
package controllers

// The operator's permissions, collected by `make manifests` into config/rbac/role.yaml. Least privilege:
// Secrets are read for target credentials and written only for the collector TLS certificates the
// operator issues (<cluster>-api-ca, <cluster>-api-tls) and the copy of its targets' TLS files that every
// collector pod mounts (<cluster>-target-tls); pod status is patched only to set the collector pods'
// readiness gate (operator.gnmic.dev/configured); nothing uses wildcards.
//
// +kubebuilder:rbac:groups=operator.gnmic.dev,resources=clusters;targets;targetprofiles;subscriptions;outputs;inputs;pipelines,verbs=get;list;watch
// +kubebuilder:rbac:groups=operator.gnmic.dev,resources=clusters;pipelines;targets,verbs=update;patch
// +kubebuilder:rbac:groups=operator.gnmic.dev,resources=clusters/status;targets/status;pipelines/status;outputs/status;inputs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=operator.gnmic.dev,resources=clusters/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=core,resources=services;configmaps,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=core,resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=core,resources=pods/status,verbs=patch
// +kubebuilder:rbac:groups=core,resources=nodes,verbs=get;list;watch
// +kubebuilder:rbac:groups=core,resources=secrets,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups=core,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;update;patch;delete
//
// The built-in metrics API (metricsadapter) registers its APIServices at run time. Its markers live here:
// controller-gen cannot load that package's dependencies.
// +kubebuilder:rbac:groups=apiregistration.k8s.io,resources=apiservices,verbs=get;create;update
