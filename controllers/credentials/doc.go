// Package credentials keeps what the operator issues and holds in Secrets for a Cluster, and reads the Secrets
// the Cluster's targets use. The Keeper writes, each only when what it holds must change:
//   - <cluster>-api-ca, which only the operator reads: the Cluster's CA and the operator's client certificate
//     for the collectors' REST API, and the key of the configuration fingerprints Cluster status shows;
//   - <cluster>-api-tls: the collectors' serving certificate, signed by that CA;
//   - <cluster>-target-tls: the TLS files of the Cluster's targets, mounted in every collector pod.
//
// Certificates are renewed when two thirds of their lifetime have passed. Secrets' data is read through a
// content cache checked against the manager's cache of their metadata, so that a steady fleet reads no Secret
// from the API server; the operator's client TLS configuration stays one value per Cluster while its material
// does, so that connections to the collectors are reused.
package credentials
