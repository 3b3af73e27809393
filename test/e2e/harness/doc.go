// Package harness runs a local Kubernetes control plane for the end-to-end suite and the demo: etcd,
// kube-apiserver (aggregation layer and service-account tokens configured), kube-controller-manager (the
// StatefulSet and HorizontalPodAutoscaler controllers), kube-scheduler and kwok (fake nodes whose pods become
// ready at once and get loopback IPs 127.1.x.y). A fake gNMIc collector listens on each collector pod's IP
// and REST port while the pod exists, acting like the real one by default (an apply is acknowledged before it
// is acted on, target changes are worked off one at a time from a 128-entry buffer, devices can be blackholed
// so that one start holds every later change), and the operator runs as its real binary with its metrics API
// registered through an APIService, so the autoscaler reaches it exactly as in a real cluster.
//
// Every process runs from the cached binaries of hack/control-plane.sh; its state and logs live in one
// directory, and Stop ends each process it started, by PID.
package harness
