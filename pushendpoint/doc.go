// Package pushendpoint serves the push endpoint of TargetSources: an HTTPS endpoint on every operator replica
// (behind the Service gnmic-operator-targetsource-push) that an inventory posts its records to, and the push
// Provider that the TargetSource controller syncs from.
//
//	POST /targetsources/{namespace}/{name}        a full snapshot: [records] or {"records": [records]}
//	POST /targetsources/{namespace}/{name}/delta  {"upsert": [records], "delete": [keys]}
//
// A post is read up to its size limit (413 beyond), authenticated against the TargetSource's Secret (a bearer
// token, or an HMAC-SHA256 of the body in X-Signature-256; 401 otherwise) and only then parsed (400). Any
// replica may receive it, and exactly one replica syncs the TargetSource, so the snapshot is stored where that
// one reads it: a ConfigMap <name>-push owned by the TargetSource, gzip-compressed JSON in binaryData, updated
// at the resourceVersion read and retried on a conflict. A change annotates the TargetSource, which wakes its
// controller at once. The serving certificate is issued and renewed by any replica into a Secret (or kept
// there by another tool) and read from it into memory by every replica. docs/target-sources.md ("Push")
// describes it for users; internal/push holds the decisions (authentication, parsing, deltas).
package pushendpoint
