package cluster

// The Cluster reconciler's permissions, collected by `make manifests` into config/rbac/role.yaml with those of
// the other packages (controllers/rbac.go has what several share). Every verb is one the operator sends:
// controllers/rbac_test.go runs a whole reconcile with only the permissions config/default grants, fails on a
// Forbidden, and fails on a permission granted but never sent. docs/operating.md#permissions gives each rule's
// reason.
//
// Reads go through informers (list, watch); get is granted only where the operator reads the API server
// directly. The operator deletes nothing but StatefulSets, PodDisruptionBudgets and NetworkPolicies: what a
// Cluster owns goes with it through its ownerReferences. Which Secrets and pod status it may write, RBAC cannot
// narrow (their names are the users'): config/rbac/operator_writes_policy.yaml does.
//
// +kubebuilder:rbac:groups=operator.gnmic.dev,resources=clusters;targets;targetprofiles;subscriptions;outputs;inputs;processors;pipelines;tunneltargetpolicies,verbs=list;watch
// +kubebuilder:rbac:groups=operator.gnmic.dev,resources=clusters/status;targets/status;pipelines/status;outputs/status;inputs/status;processors/status,verbs=patch
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
// +kubebuilder:rbac:groups=core,resources=pods/status,verbs=patch
