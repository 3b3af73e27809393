// Package fleetmemo remembers, for one Cluster, the work its targets cost between reconciles, so that a
// reconcile re-renders and re-validates only the targets that changed, and cuts again only the pods whose
// configuration changed. Memo has the one rule by which what it remembers is used or done again; its results
// are those of a full recomputation (render.PodConfig, render.Subset), as its property test shows on random
// sequences of changes. It imports no Kubernetes client.
package fleetmemo
