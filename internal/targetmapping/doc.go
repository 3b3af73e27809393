// Package targetmapping turns inventory records into Targets with CEL (the expression language Kubernetes
// uses, through cel-go). A Mapping is compiled once per TargetSource generation; each record is the CEL
// variable record. The presets (netbox, httpSD, consul) are nothing but expressions (presets.go), which
// docs/target-sources.md prints so that users can start from them.
//
// A record maps to one Target, to several (expand), or to none (include false: skipped). A record whose
// expressions fail at run time, or give an invalid name, address, labels, no profile or a profile the mapping
// does not allow (profiles.go), is invalid: it is reported and maps to nothing, and the other records map as
// usual.
package targetmapping
