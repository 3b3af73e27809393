// Package controllers holds the reconcilers. Each reads state from the cache, calls a pure core
// (internal/placement, …) and writes the result back; the decisions live in the cores.
package controllers

// The operator's permissions, collected by `make manifests` into config/rbac/role.yaml. Every verb is one the
// operator sends: rbac_test.go runs a whole reconcile with only the permissions config/default grants, fails on
// a Forbidden, and fails on a permission granted but never sent. docs/operating.md#permissions gives each
// rule's reason.
//
// Reads go through informers (list, watch); get is granted only where the operator reads the API server
// directly. The operator deletes nothing but PodDisruptionBudgets and NetworkPolicies: what a Cluster owns
// goes with it through its ownerReferences. Which Secrets and pod status it may write, RBAC cannot narrow
// (their names are the users'): config/rbac/operator_writes_policy.yaml does.
//
// +kubebuilder:rbac:groups=operator.gnmic.dev,resources=clusters;targets;targetprofiles;subscriptions;outputs;inputs;pipelines,verbs=list;watch
// +kubebuilder:rbac:groups=operator.gnmic.dev,resources=clusters/status;targets/status;pipelines/status;outputs/status;inputs/status,verbs=patch
//
// An ownerReference with blockOwnerDeletion (controllerutil.SetControllerReference) needs update on the
// owner's finalizers where the OwnerReferencesPermissionEnforcement admission plugin runs (OpenShift).
// +kubebuilder:rbac:groups=operator.gnmic.dev,resources=clusters/finalizers,verbs=update
//
// The collector workload. get reads an object the label-filtered cache cannot see: one whose cluster label
// was removed (getOrCreate). delete removes a StatefulSet no domain of the Cluster runs any more (domains
// added, removed or renamed).
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=core,resources=services;configmaps,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=core,resources=pods;nodes,verbs=list;watch
// +kubebuilder:rbac:groups=core,resources=pods/status,verbs=patch
//
// Secrets: target credentials and TLS files are read; the collector TLS Secrets (<cluster>-api-ca,
// <cluster>-api-tls, <cluster>-target-tls) and the metrics API's certificate Secret are written.
// +kubebuilder:rbac:groups=core,resources=secrets,verbs=get;list;watch;create;update
//
// Events: client-go patches an Event to count a repeat. The metrics API's Events (events.k8s.io) never repeat:
// one per change of an APIService's owner, which changes the APIService's resourceVersion they refer to.
// +kubebuilder:rbac:groups=core,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create
//
// The built-in metrics API (metricsadapter) registers its APIServices at run time; create cannot be limited
// by name. Its markers live here: controller-gen cannot load that package's dependencies.
// +kubebuilder:rbac:groups=apiregistration.k8s.io,resources=apiservices,verbs=create
// +kubebuilder:rbac:groups=apiregistration.k8s.io,resources=apiservices,resourceNames=v1beta1.custom.metrics.k8s.io;v1beta2.custom.metrics.k8s.io;v1beta1.external.metrics.k8s.io,verbs=get;update
// The APIServices are owned by the install's ClusterRoleBindings of the operator's ServiceAccount, so that
// uninstalling removes them (metricsadapter/install_owner.go); finding those bindings needs a list.
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterrolebindings,verbs=list
