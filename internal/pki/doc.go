// Package pki issues the certificates of a Cluster's collectors: its CAs, one per role, the collectors'
// serving certificates, and client certificates. Each listener of a collector trusts the CA of one role only
// (the operator's client CA for the REST API, the device CA for the tunnel server, the subscriber CA for the
// gNMI server), and the operator trusts only the collector server CA, so a certificate of one role cannot stand
// in for another and no one but the operator can push configuration. Every certificate names its use
// (server or client authentication), which crypto/tls checks. Everything is PEM in and PEM out; nothing here
// talks to Kubernetes.
package pki
