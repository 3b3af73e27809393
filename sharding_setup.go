package main

import (
	"fmt"
	"os"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/gnmic-operator/gnmic-operator/controllers/cluster"
	"github.com/gnmic-operator/gnmic-operator/controllers/sharding"
)

// newShardMember makes this process a member of the sharded operator: its member Lease lives in the operator's
// namespace (POD_NAMESPACE) and its identity is its pod name (POD_NAME, else the host name) with a nonce. Only
// a pod name from POD_NAME lets it mark its pod's earlier processes dead: two processes may share a host name.
func newShardMember(mgr ctrl.Manager, o options) (*sharding.Member, error) {
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
	opts := sharding.Options{Namespace: namespace, Identity: sharding.NewIdentity(pod), Pod: knownPod,
		LeaseDuration: o.shardLeaseDuration, Share: cluster.ShareKinds()}
	if o.watchNamespace != "" {
		for _, ns := range strings.Split(o.watchNamespace, ",") {
			opts.WatchNamespaces = append(opts.WatchNamespaces, strings.TrimSpace(ns))
		}
	}
	member, err := sharding.New(mgr, opts)
	if err != nil {
		return nil, fmt.Errorf("--sharding: %w", err)
	}
	return member, nil
}
