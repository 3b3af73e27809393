// Package credentials keeps what the operator issues and holds in Secrets for a Cluster, and reads the Secrets
// the Cluster's targets use. The Keeper writes, each only when what it holds must change:
//   - <cluster>-api-ca, which only the operator reads: the collector server CA, the operator client CA and the
//     operator's client certificate for the collectors' REST API, and the key of the configuration
//     fingerprints Cluster status shows;
//   - <cluster>-api-tls: the collectors' serving certificate, from the collector server CA, and the operator
//     client CA, the only one the REST API trusts;
//   - for the gNMI server and the tunnel server, the CA of their clients' role, the server's certificate and a
//     client certificate (client_role.go);
//   - <cluster>-target-tls: the TLS files of the Cluster's targets, mounted in every collector pod.
//
// Each listener trusts one role's CA only, and the operator only the collector server CA (docs/security.md,
// "Certificate roles"). Certificates are renewed when two thirds of their lifetime have passed. Secrets' data
// is read through a content cache checked against the manager's cache of their metadata, so that a steady
// fleet reads no Secret from the API server; the operator's client TLS configuration stays one value per Cluster while its material
// does, so that connections to the collectors are reused.
package credentials
