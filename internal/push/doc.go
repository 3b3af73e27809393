// Package push is the pure core of a TargetSource's push endpoint: it authenticates a post (a bearer token
// or an HMAC-SHA256 signature of the body, both compared in constant time), parses what an inventory posts
// (a full snapshot: a JSON array of records or {"records": [...]}; or a delta: {"upsert": [...], "delete":
// [...]}, records addressed by the value of one top-level key field) and applies a delta to the stored
// snapshot. A snapshot is stored as gzip-compressed JSON, identified by the SHA-256 of its uncompressed
// form, so that an unchanged snapshot is recognised without comparing records.
//
// It knows nothing of Kubernetes or HTTP servers: pushendpoint reads the bodies and Secrets, stores the
// snapshot in a ConfigMap and answers.
package push
