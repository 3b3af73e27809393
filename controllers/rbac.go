package controllers

// The permissions several of the operator's packages use, collected by `make manifests` into
// config/rbac/role.yaml with each reconciler's own (cluster/rbac.go, balancer/reconciler.go,
// cluster/netpol.go). Every verb is one the operator sends: rbac_test.go runs a whole reconcile with only the
// permissions config/default grants, fails on a Forbidden, and fails on a permission granted but never sent.
// docs/operating.md#permissions gives each rule's reason.
//
// Pods: the Cluster reconciler's collector pods, the Balancer's targets' pods (listed from the API server) and
// the metrics API's; Nodes: a collector pod on a lost Node cannot serve.
// +kubebuilder:rbac:groups=core,resources=pods;nodes,verbs=list;watch
//
// Secrets: target credentials and TLS files are read; the collector TLS Secrets (<cluster>-api-ca,
// <cluster>-api-tls, <cluster>-target-tls, and the gNMI and tunnel servers' <cluster>-{gnmi,tunnel}-{ca,tls,client-tls})
// and the metrics API's certificate Secret are written.
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
//
// The TargetSource push endpoint (pushendpoint) annotates a TargetSource whose pushed snapshot changed, which
// wakes the replica that syncs it; the snapshot's ConfigMap falls under the ConfigMap rule of cluster/rbac.go.
// +kubebuilder:rbac:groups=operator.gnmic.dev,resources=targetsources,verbs=patch
