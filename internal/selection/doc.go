// Package selection works out what a Cluster collects: the targets,
// subscriptions, outputs and inputs that its enabled Pipelines select, and the
// event processors those outputs and inputs apply, in order (processors.go).
//
// The model is a union. Every enabled Pipeline whose clusterRef names the
// Cluster selects objects of its namespace by reference (targetRefs, …) and by
// label selector (targetSelectors, …); references and selectors add up, and so
// do pipelines. An empty label selector selects every object of its kind, as
// everywhere in Kubernetes. A target collects, for every pipeline that selects
// it, that pipeline's subscriptions and outputs, and it carries the pipelines'
// labels; an input feeds the outputs of the pipelines that select it. Nothing
// in a selection is fatal: a reference to a missing object, an invalid
// selector, a pipeline that selects targets but no subscription are each
// reported in Selection.Problems and skipped, so one mistake never stops the
// rest from being collected. The result depends only on the objects, never on
// the order they were listed in.
//
// Resolve is what a Cluster reconciler calls, in three steps a reconciler may
// also call itself to redo only the Targets that changed (prepared.go):
// Prepare works out everything that does not depend on Targets, with a Key
// that changes when any object it depends on changes; Prepared.Target picks
// one Target, from its name and labels only; Prepared.Selection assembles the
// Selection from every Target's pick. Targets picked by the same Pipelines
// share one worked-out result.
//
// ClustersSelecting and ClustersUsingProfile answer the reverse question for
// a reconciler's watches (which Clusters does this changed object concern);
// ProfilesOf, SecretsOf and TLSSecretsOf name what a selection needs beyond
// itself. The package reads API types only and never talks to the API server.
package selection
