package main

import (
	"fmt"
	"os"
	"strings"

	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/gnmic-operator/gnmic-operator/controllers"
)

// newSharding makes this process a member of the sharded operator: its member Lease lives in the operator's
// namespace (POD_NAMESPACE) and its identity is its pod name (POD_NAME, else the host name) with a nonce. Only
// a pod name from POD_NAME lets it mark its pod's earlier processes dead: two processes may share a host name.
func newSharding(mgr ctrl.Manager, o options) (*controllers.Sharding, error) {
	namespace := os.Getenv("POD_NAMESPACE")
	if namespace == "" {
		return nil, fmt.Errorf("--sharding needs the operator's namespace in POD_NAMESPACE (config/manager sets it)")
	}
	pod := os.Getenv("POD_NAME")
	knownPod := pod
	if pod == "" {
		host, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("--sharding: no POD_NAME and no host name: %w", err)
		}
		pod = host
	}
	clientset, err := kubernetes.NewForConfig(mgr.GetConfig())
	if err != nil {
		return nil, fmt.Errorf("clientset for member leases: %w", err)
	}
	sharding := &controllers.Sharding{
		Leases: clientset, Clusters: mgr.GetCache(), Namespace: namespace,
		Identity: controllers.NewShardMemberIdentity(pod), Pod: knownPod, LeaseDuration: o.shardLeaseDuration,
	}
	if o.watchNamespace != "" {
		for _, ns := range strings.Split(o.watchNamespace, ",") {
			sharding.WatchNamespaces = append(sharding.WatchNamespaces, strings.TrimSpace(ns))
		}
	}
	return sharding, nil
}
