// Package pki issues the certificates that protect the collector REST API: a CA per Cluster, a serving
// certificate for its collector pods and a client certificate for the operator. Collectors accept only
// clients with a certificate from that CA, so target credentials never cross the network in clear and no
// one but the operator can push configuration. Everything is PEM in and PEM out; nothing here talks to
// Kubernetes.
package pki
