// Package collector reaches the gNMIc collector pods: a Dialer gives the REST client of one pod (at its pod IP,
// over TLS verified against the pod's DNS name, with one reused transport per pod), Streams follows each ready
// pod's target-state event stream and tells which Cluster's collector changed, and the Ledger remembers what
// each collector process acknowledged and last reported running. It knows nothing of placement or of the
// reconcilers that use it.
package collector
