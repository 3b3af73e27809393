// Package harness runs a local Kubernetes control plane for the end-to-end suite and the demo: etcd,
// kube-apiserver (aggregation layer and service-account tokens configured), kube-controller-manager (the
// StatefulSet, Deployment and HorizontalPodAutoscaler controllers), kube-scheduler and kwok (fake nodes whose
// pods become ready at once and get loopback IPs 127.1.x.y). A fake gNMIc collector listens on each collector
// pod's IP and REST port while the pod exists, acting like the real one by default (an apply is acknowledged
// before it is acted on, target changes are worked off one at a time from a 128-entry buffer, devices can be
// blackholed so that one start holds every later change).
//
// The operator is installed as users install it (config/default, or the bundle's CSV) and its Deployment's
// pods run through a pod emulator that plays their kubelet (emulator.go, pod_worker.go): each pod's
// container is the operator binary started in a sandbox built from the pod spec (container.go, sandbox.go)
// — the image's files under a read-only root, the pod's volumes at their mount paths, its ServiceAccount's
// bound token as its only credential — with probes, restarts, status and endpoint slices kept as a kubelet
// and the endpoint slice controller would. A sandbox is this program started again: the package's init
// recognises it by its environment and enters the container before main runs. docs/development.md ("How
// e2e runs the operator") lists where the emulator differs from a kubelet.
//
// Every process runs from the cached binaries of hack/control-plane.sh; its state and logs live in one
// directory, and Stop ends each process it started, by PID.
package harness
