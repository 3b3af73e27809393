package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TargetSourceSpec is an inventory of devices (a provider), how each of its records becomes a Target (mapping)
// and how carefully the Targets follow it (sync). Exactly one provider is set.
//
// Each provider adds its field to the rule below (docs/target-sources.md).
// +kubebuilder:validation:XValidation:rule="[has(self.http), has(self.push), has(self.consul)].filter(p, p).size() == 1",message="exactly one provider must be set: http, push or consul"
type TargetSourceSpec struct {
	// HTTP pulls the inventory from a JSON API (NetBox, Nautobot, a CMDB, a Prometheus http_sd endpoint) every
	// interval.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="HTTP Inventory"
	HTTP *HTTPInventory `json:"http,omitempty"`

	// Push serves an endpoint on the operator that the inventory posts its snapshots to.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Push Inventory"
	Push *PushInventory `json:"push,omitempty"`

	// Consul reads the instances of services from Consul's catalog every interval.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Consul Inventory"
	Consul *ConsulInventory `json:"consul,omitempty"`

	// Mapping turns each inventory record into a Target: a preset, CEL expressions, defaults.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec
	// +kubebuilder:default={}
	Mapping TargetMapping `json:"mapping,omitempty"`

	// Sync says how the Targets follow the inventory: how many syncs a device may be missing before its Target
	// is deleted, which answers count as truncated, how many writes go to the API server at once.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec
	// +kubebuilder:default={}
	Sync TargetSync `json:"sync,omitempty"`
}

// HTTPInventory pulls the inventory from a JSON API. Each page is a JSON document; its records are the list at
// recordsField (or the document itself when it is a list), and the next page is the URL at
// pagination.nextField. With the netbox preset the defaults are NetBox's: results, next and count.
// +kubebuilder:validation:XValidation:rule="!has(self.tls) || !has(self.tls.insecureSkipVerify) || !self.tls.insecureSkipVerify || !has(self.tls.caRef)",message="tls.insecureSkipVerify and tls.caRef exclude each other: a CA is useless when verification is skipped"
type HTTPInventory struct {
	// URL of the first page, http:// or https://, for example https://netbox.example.com/api/dcim/devices/?limit=1000.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.matches('^https?://[^/?#]+')",message="url must be an absolute http:// or https:// URL"
	// +required
	URL string `json:"url"`

	// Auth is sent with every request: a token (Authorization: <scheme> <token>) or basic credentials, from a
	// Secret in the TargetSource's namespace.
	// +optional
	Auth *HTTPAuth `json:"auth,omitempty"`

	// Headers are added to every request, for example Accept: application/json; version=2.0 for Nautobot.
	// Authorization is set by auth and cannot be set here.
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.lowerAscii() != 'authorization')",message="set Authorization through auth, from a Secret"
	// +optional
	Headers map[string]string `json:"headers,omitempty"`

	// TLS verifies the inventory's certificate. Without it the system's CAs verify it.
	// +optional
	TLS *HTTPInventoryTLS `json:"tls,omitempty"`

	// RecordsField is the dotted path of the list of records in each page, for example results. Empty: the
	// page itself is the list (Prometheus http_sd), or the preset's (netbox: results).
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9_@$-]+([.][A-Za-z0-9_@$-]+)*$')",message="recordsField must be field names separated by dots, such as results or data.devices"
	// +optional
	RecordsField string `json:"recordsField,omitempty"`

	// Pagination follows a next link from page to page.
	// +optional
	Pagination *HTTPPagination `json:"pagination,omitempty"`

	// Interval between two syncs. At least 10s. (The defaults are written as Go writes durations, so that a
	// client that reads and writes the object back changes nothing.)
	// +kubebuilder:default="5m0s"
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$') && duration(self) >= duration('10s')",message="interval must be a duration of at least 10s, such as 5m"
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	Interval *metav1.Duration `json:"interval,omitempty"`

	// Timeout of one whole sync: every page, read to its end.
	// +kubebuilder:default="1m0s"
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$') && duration(self) >= duration('1s') && duration(self) <= duration('30m')",message="timeout must be a duration from 1s to 30m, such as 60s"
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// MaxPageBytes is the largest page body read; a larger page fails the sync.
	// +kubebuilder:default=67108864
	// +kubebuilder:validation:Minimum=1024
	// +kubebuilder:validation:Maximum=1073741824
	// +optional
	MaxPageBytes int64 `json:"maxPageBytes,omitempty"`
}

// HTTPAuth is one way to authenticate to the inventory.
// +kubebuilder:validation:XValidation:rule="[has(self.token), has(self.basic)].filter(a, a).size() == 1",message="auth must set exactly one of token and basic"
type HTTPAuth struct {
	// Token sends Authorization: <scheme> <token>, the token read from a Secret's key.
	// +optional
	Token *HTTPTokenAuth `json:"token,omitempty"`

	// Basic sends HTTP basic credentials from a Secret with the keys username and password.
	// +optional
	Basic *HTTPBasicAuth `json:"basic,omitempty"`
}

// HTTPTokenAuth is a token in the Authorization header.
type HTTPTokenAuth struct {
	// SecretKeyRef names the Secret, in the TargetSource's namespace, and its key holding the token.
	// +required
	SecretKeyRef SecretKeyReference `json:"secretKeyRef"`

	// Scheme before the token: Bearer, or Token for NetBox's v1 API tokens.
	// +kubebuilder:default="Bearer"
	// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z0-9!#$%&'*+.^_|~-]*$`
	// +kubebuilder:validation:MaxLength=32
	// +optional
	Scheme string `json:"scheme,omitempty"`
}

// HTTPBasicAuth is HTTP basic authentication.
type HTTPBasicAuth struct {
	// SecretName names a Secret in the TargetSource's namespace with the keys username and password.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	SecretName string `json:"secretName"`
}

// HTTPInventoryTLS verifies the inventory's certificate.
type HTTPInventoryTLS struct {
	// CARef names the PEM CA bundle that verifies the inventory's certificate, instead of the system's CAs.
	// +optional
	CARef *CABundleReference `json:"caRef,omitempty"`

	// ServerName overrides the name verified in the inventory's certificate.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ServerName string `json:"serverName,omitempty"`

	// InsecureSkipVerify accepts any certificate. Off by default; use it only in labs.
	// +optional
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`
}

// CABundleReference names one key of a Secret or of a ConfigMap in the same namespace that holds PEM CA
// certificates.
// +kubebuilder:validation:XValidation:rule="[has(self.secretKeyRef), has(self.configMapKeyRef)].filter(r, r).size() == 1",message="caRef must set exactly one of secretKeyRef and configMapKeyRef"
type CABundleReference struct {
	// SecretKeyRef names a Secret and its key, for example ca.crt.
	// +optional
	SecretKeyRef *SecretKeyReference `json:"secretKeyRef,omitempty"`
	// ConfigMapKeyRef names a ConfigMap and its key, for example ca.crt.
	// +optional
	ConfigMapKeyRef *ConfigMapKeyReference `json:"configMapKeyRef,omitempty"`
}

// ConfigMapKeyReference names one key of a ConfigMap in the same namespace.
type ConfigMapKeyReference struct {
	// Name of the ConfigMap.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
	// Key of the ConfigMap's data.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Key string `json:"key"`
}

// HTTPPagination follows the inventory's pages: each page names the next one (NetBox and Nautobot's next).
type HTTPPagination struct {
	// NextField is the dotted path, in each page, of the URL of the next page; the last page has none there
	// (null, an empty string or no field). A relative URL is resolved against the page's. Default with the
	// netbox preset: next.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9_@$-]+([.][A-Za-z0-9_@$-]+)*$')",message="nextField must be field names separated by dots, such as next or links.next"
	// +optional
	NextField string `json:"nextField,omitempty"`

	// CountField is the dotted path, in the first page, of the total number of records the inventory holds
	// (NetBox's count). When set, an answer with fewer records than it announced is truncated and changes
	// nothing. Default with the netbox preset: count.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9_@$-]+([.][A-Za-z0-9_@$-]+)*$')",message="countField must be field names separated by dots, such as count"
	// +optional
	CountField string `json:"countField,omitempty"`

	// MaxPages bounds the pages of one sync; an inventory with more fails the sync (it would otherwise look
	// truncated, or loop).
	// +kubebuilder:default=1000
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	// +optional
	MaxPages int32 `json:"maxPages,omitempty"`
}

// PushInventory is an inventory that posts its snapshots to the operator (docs/target-sources.md#push).
// +kubebuilder:validation:XValidation:rule="[has(self.auth.bearerTokenRef), has(self.auth.hmacSecretRef)].filter(a, a).size() == 1",message="push.auth must set exactly one of bearerTokenRef and hmacSecretRef"
type PushInventory struct {
	// Auth authenticates every post: a bearer token or an HMAC signature of the body, from a Secret.
	// +required
	Auth PushAuth `json:"auth"`

	// KeyField is the top-level field of a record whose value (a string or a number) identifies it: a delta
	// upserts and deletes records by it, and no two records of a snapshot may share it. For example name,
	// or id for NetBox devices.
	// +kubebuilder:default="name"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	KeyField string `json:"keyField,omitempty"`

	// MaxBodyBytes is the largest body accepted; a larger post is refused (413) before it is parsed. The
	// operator's --targetsource-push-max-body-bytes caps it.
	// +kubebuilder:default=16777216
	// +kubebuilder:validation:Minimum=1024
	// +kubebuilder:validation:Maximum=268435456
	// +optional
	MaxBodyBytes int64 `json:"maxBodyBytes,omitempty"`
}

// PushAuth is how a post to the push endpoint proves it comes from the inventory.
type PushAuth struct {
	// BearerTokenRef names the Secret key holding the token a post sends as Authorization: Bearer <token>.
	// +optional
	BearerTokenRef *SecretKeyReference `json:"bearerTokenRef,omitempty"`

	// HMACSecretRef names the Secret key holding the key a post's body is signed with.
	// +optional
	HMACSecretRef *SecretKeyReference `json:"hmacSecretRef,omitempty"`
}

// Mapping presets: the expressions they stand for are in docs/target-sources.md.
const (
	// MappingPresetNetBox maps the devices of NetBox's /api/dcim/devices/.
	MappingPresetNetBox = "netbox"
	// MappingPresetHTTPSD maps Prometheus http_sd target groups: one Target per target.
	MappingPresetHTTPSD = "httpSD"
)

// TargetMapping turns each inventory record into a Target. Every expression is CEL over the variable record
// (the record as JSON: maps, lists, strings, numbers, booleans, null); an expression left empty takes the
// preset's, and without a preset its default. docs/target-sources.md has the presets as CEL.
type TargetMapping struct {
	// Preset is a set of expressions for a known inventory: netbox (NetBox's /api/dcim/devices/), httpSD
	// (Prometheus http_sd target groups), consul (instances of Consul services). Expressions set here replace
	// the preset's one by one.
	// +kubebuilder:validation:Enum=netbox;httpSD;consul
	// +optional
	Preset string `json:"preset,omitempty"`

	// Expand turns one record into several (a list of records), each mapped on its own. For example httpSD's:
	// record.targets.map(t, {"address": t, "labels": record.labels}). Default: each record is one.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	Expand string `json:"expand,omitempty"`

	// Include is a bool: false leaves the record out (it counts as skipped, not missing from the inventory).
	// Default: every record.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	Include string `json:"include,omitempty"`

	// Name of the Target, a DNS subdomain name. The function targetName(s) lowercases s and replaces what a
	// name cannot hold with '-'. Default: targetName(record.name).
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	Name string `json:"name,omitempty"`

	// Address of the device: host:port, or a host to which defaults.port is added. Default: record.address.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	Address string `json:"address,omitempty"`

	// Profile names the Target's TargetProfile; empty or null takes defaults.profile. It must give
	// defaults.profile or one of allowedProfiles. Default: empty.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	Profile string `json:"profile,omitempty"`

	// AllowedProfiles are the TargetProfiles a record may choose through profile, besides defaults.profile,
	// which is always allowed. A record whose profile is another is invalid (status.invalidRecords names it)
	// and creates or updates no Target. Empty: defaults.profile only; with no defaults.profile either, no
	// record may choose a profile. A profile chooses the credentials sent to the record's address, and the
	// netbox and consul presets read it from the inventory (gnmic_profile): this list keeps whoever edits the
	// inventory from sending another profile's credentials. There is no wildcard: list each profile.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.all(p, !p.contains('*'))",message="allowedProfiles has no wildcard: list each TargetProfile by name"
	// +listType=set
	// +optional
	AllowedProfiles []string `json:"allowedProfiles,omitempty"`

	// Labels of the Target: a map of strings, or a list of maps merged in order. Entries whose value is null or
	// empty are left out. Default: none.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	Labels string `json:"labels,omitempty"`

	// Tags of the Target (spec.tags, attached to its telemetry): a map of strings, or a list of maps merged in
	// order. Entries whose value is null or empty are left out. Default: none.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	Tags string `json:"tags,omitempty"`

	// Defaults fill what the expressions leave empty.
	// +optional
	// +kubebuilder:default={}
	Defaults TargetDefaults `json:"defaults,omitempty"`
}

// TargetDefaults fill what a mapping leaves empty.
type TargetDefaults struct {
	// Profile of a Target whose profile expression gives nothing; always allowed (see allowedProfiles). A
	// record that gets no profile is invalid.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Profile string `json:"profile,omitempty"`

	// Port added to an address without one. Default 57400.
	// +kubebuilder:default=57400
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port int32 `json:"port,omitempty"`

	// Labels put on every Target; the mapped labels win over them.
	// +kubebuilder:validation:MaxProperties=32
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
}

// TargetSync says how carefully the Targets follow the inventory.
type TargetSync struct {
	// DeleteAfterMisses is how many successful syncs in a row a device must be missing from before its Target
	// is deleted. 1 deletes it at the first sync without it.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	DeleteAfterMisses int32 `json:"deleteAfterMisses,omitempty"`

	// MinRecordsPercent is the truncation guard: an answer with fewer records than this percentage of the last
	// successful sync's is taken as truncated and changes nothing. 0 turns the guard off.
	// +kubebuilder:default=50
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	MinRecordsPercent *int32 `json:"minRecordsPercent,omitempty"`

	// BatchSize bounds the Target writes (creates, updates, deletes) sent to the API server at once.
	// +kubebuilder:default=200
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=5000
	// +optional
	BatchSize int32 `json:"batchSize,omitempty"`

	// MaxRecords bounds the records of one sync, every page together, counted as they are read (before expand
	// and include). An inventory with more fails the sync with reason BudgetExceeded and changes nothing; a
	// push of more is refused (413).
	// +kubebuilder:default=100000
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000000
	// +optional
	MaxRecords int32 `json:"maxRecords,omitempty"`

	// MaxBytes bounds the bytes of one sync, every page (or Consul answer, or stored push snapshot) together,
	// counted after decompression as they are read. More fails the sync with reason BudgetExceeded and changes
	// nothing. http.maxPageBytes bounds each page besides.
	// +kubebuilder:default=268435456
	// +kubebuilder:validation:Minimum=1024
	// +kubebuilder:validation:Maximum=4294967296
	// +optional
	MaxBytes int64 `json:"maxBytes,omitempty"`

	// MappingTimeout bounds the time mapping every record of one sync takes (each expression is bounded on
	// each record by its CEL cost besides). A mapping that takes longer fails the sync with reason
	// BudgetExceeded and changes nothing.
	// +kubebuilder:default="30s"
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$') && duration(self) >= duration('1s') && duration(self) <= duration('30m')",message="mappingTimeout must be a duration from 1s to 30m, such as 30s"
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	MappingTimeout *metav1.Duration `json:"mappingTimeout,omitempty"`
}

// TargetSourceStatus is what the last syncs did.
type TargetSourceStatus struct {
	// ObservedGeneration is the .metadata.generation the last sync used.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Provider in use: http, push or consul.
	// +optional
	Provider string `json:"provider,omitempty"`

	// Syncs counts the successful syncs. A Target's missing count is kept in syncs (its annotation
	// operator.gnmic.dev/missing-since), so that a restart or another replica counts on from where it was.
	// +optional
	Syncs int64 `json:"syncs,omitempty"`

	// LastSyncTime is when the last successful sync ended.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Last Sync"
	LastSyncTime *metav1.Time `json:"lastSyncTime,omitempty"`

	// LastAttemptTime is when the last sync, successful or not, ended.
	// +optional
	LastAttemptTime *metav1.Time `json:"lastAttemptTime,omitempty"`

	// BudgetExceededSyncs counts the syncs in a row that failed over a budget (reason BudgetExceeded). The next
	// sync waits the interval times 2^(budgetExceededSyncs-1), at most an hour (or the interval, when longer),
	// whichever replica runs it; a spec change syncs at once, and a sync that fails for no budget sets it back
	// to 0.
	// +optional
	BudgetExceededSyncs int32 `json:"budgetExceededSyncs,omitempty"`

	// Syncing names the replica of a sharded operator that started a sync and has not written its result yet,
	// and when it started. The other replicas start none while that replica's member Lease shows it running
	// (Ready or Draining), up to 10 minutes; the sync's result clears it. Without sharding it stays empty.
	// +optional
	Syncing *TargetSourceSyncing `json:"syncing,omitempty"`

	// LastSyncRequest is the value of the annotation operator.gnmic.dev/sync-requested that the last sync
	// answered: setting the annotation to another value syncs at once.
	// +optional
	LastSyncRequest string `json:"lastSyncRequest,omitempty"`

	// Records the inventory held at the last successful sync (before expand and include); the truncation guard
	// compares the next answer with it.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Records",xDescriptors="urn:alm:descriptor:text"
	Records int32 `json:"records"`

	// RecordsSkipped were left out by include at the last successful sync.
	// +optional
	RecordsSkipped int32 `json:"recordsSkipped,omitempty"`

	// RecordsInvalid could not be mapped to a valid Target at the last successful sync (an expression failed,
	// an invalid name or address, no profile or one mapping.allowedProfiles does not allow, two records with
	// one name); invalidRecords says why.
	// +optional
	RecordsInvalid int32 `json:"recordsInvalid,omitempty"`

	// InvalidRecords are the first invalid records, each with why.
	// +kubebuilder:validation:MaxItems=10
	// +listType=atomic
	// +optional
	InvalidRecords []string `json:"invalidRecords,omitempty"`

	// Targets this TargetSource owns.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Targets",xDescriptors="urn:alm:descriptor:text"
	Targets int32 `json:"targets"`

	// TargetsMissing are owned Targets whose device was missing from the last successful sync; each is deleted
	// once missing from sync.deleteAfterMisses syncs in a row.
	// +optional
	TargetsMissing int32 `json:"targetsMissing,omitempty"`

	// TargetsCreated by the last successful sync.
	// +optional
	TargetsCreated int32 `json:"targetsCreated,omitempty"`

	// TargetsUpdated by the last successful sync.
	// +optional
	TargetsUpdated int32 `json:"targetsUpdated,omitempty"`

	// TargetsDeleted by the last successful sync.
	// +optional
	TargetsDeleted int32 `json:"targetsDeleted,omitempty"`

	// TargetsConflicting are Targets the inventory names that exist and are not this TargetSource's (made by
	// hand, or by another TargetSource): they are left alone.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Conflicting Targets",xDescriptors="urn:alm:descriptor:text"
	TargetsConflicting int32 `json:"targetsConflicting,omitempty"`

	// ConflictingTargets are the names of the first conflicting Targets.
	// +kubebuilder:validation:MaxItems=10
	// +listType=atomic
	// +optional
	ConflictingTargets []string `json:"conflictingTargets,omitempty"`

	// Conditions: Synced, InventoryReachable, Truncated, MappingValid, Conflicts.
	// +listType=map
	// +listMapKey=type
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,xDescriptors="urn:alm:descriptor:io.kubernetes.conditions"
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// TargetSourceSyncing is a sync in flight on one replica of a sharded operator.
type TargetSourceSyncing struct {
	// Member is the replica's member name (its pod name and a nonce per process).
	Member string `json:"member"`
	// Since is when the sync started.
	Since metav1.Time `json:"since"`
}

// Labels and annotations the TargetSource controller puts on its Targets.
const (
	// TargetSourceLabel carries the name of the TargetSource that made a Target (its controller owner
	// reference says the same, with the UID).
	TargetSourceLabel = "operator.gnmic.dev/targetsource"
	// SyncRequestedAnnotation on a TargetSource asks for a sync now: any value other than
	// status.lastSyncRequest, for example the time (kubectl annotate --overwrite targetsource/x
	// operator.gnmic.dev/sync-requested="$(date +%s)").
	SyncRequestedAnnotation = "operator.gnmic.dev/sync-requested"
	// MissingSinceAnnotation is on a Target whose device is missing from the inventory: the sync number
	// (status.syncs) of the first sync it was missing from.
	MissingSinceAnnotation = "operator.gnmic.dev/missing-since"
)

// Condition types of a TargetSource.
const (
	// ConditionSynced is True when the last sync applied the inventory; False when it changed nothing (the
	// reason says why: fetch failed, truncated, mapping invalid, writes failed).
	ConditionSynced = "Synced"
	// ConditionInventoryReachable is True when the last fetch got an answer.
	ConditionInventoryReachable = "InventoryReachable"
	// ConditionTruncated is True when the last answer was taken as truncated and ignored.
	ConditionTruncated = "Truncated"
	// ConditionMappingValid is False when an expression of spec.mapping does not compile; the message has the
	// expression and the compiler's words.
	ConditionMappingValid = "MappingValid"
	// ConditionConflicts is True when the inventory names Targets that are not this TargetSource's.
	ConditionConflicts = "Conflicts"
)

// Condition reasons of a TargetSource.
const (
	ReasonSynced         = "Synced"
	ReasonFetchFailed    = "FetchFailed"
	ReasonTruncated      = "Truncated"
	ReasonNotTruncated   = "NotTruncated"
	ReasonMappingInvalid = "MappingInvalid"
	ReasonMappingValid   = "MappingValid"
	// ReasonRecordsInvalid (MappingValid False): the mapping compiles, and some records map to no valid Target;
	// status.invalidRecords names the first with why. The others are synced.
	ReasonRecordsInvalid  = "RecordsInvalid"
	ReasonApplyFailed     = "ApplyFailed"
	ReasonReachable       = "Reachable"
	ReasonTargetsConflict = "TargetsConflict"
	ReasonNoConflicts     = "NoConflicts"
	// ReasonNoSnapshotYet (Synced Unknown): the provider has nothing to sync yet (a push inventory that has not
	// posted).
	ReasonNoSnapshotYet = "NoSnapshotYet"
	// ReasonBudgetExceeded (Synced False): the answer went over a budget (spec.sync.maxRecords, maxBytes,
	// mappingTimeout; http.maxPageBytes; the provider's timeout), named in the message. Nothing was changed; the
	// sync is retried with backoff (status.budgetExceededSyncs).
	ReasonBudgetExceeded = "BudgetExceeded"
)

// Event reasons a user sees in `kubectl describe targetsource`.
const (
	EventInventorySynced    = "InventorySynced"
	EventSyncFailed         = "SyncFailed"
	EventInventoryTruncated = "InventoryTruncated"
	EventMappingInvalid     = "MappingInvalid"
	EventTargetsConflict    = "TargetsConflict"
	// EventBudgetExceeded: a sync, or a push, went over a budget.
	EventBudgetExceeded = "BudgetExceeded"
)

// TargetSource keeps a set of Targets in sync with an inventory: it creates a Target per device, updates it
// when the device changes, and deletes it once the device has been missing for several syncs. One bad answer
// (failed, truncated) changes nothing; a Target it did not make is never touched.
//
// +operator-sdk:csv:customresourcedefinitions:displayName="Target Source",resources={{Target,v1alpha1},{Secret,v1},{ConfigMap,v1}}
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=gnmic
// +kubebuilder:printcolumn:name="Provider",type=string,JSONPath=`.status.provider`
// +kubebuilder:printcolumn:name="Records",type=integer,JSONPath=`.status.records`
// +kubebuilder:printcolumn:name="Targets",type=integer,JSONPath=`.status.targets`
// +kubebuilder:printcolumn:name="Missing",type=integer,JSONPath=`.status.targetsMissing`
// +kubebuilder:printcolumn:name="Conflicts",type=integer,JSONPath=`.status.targetsConflicting`
// +kubebuilder:printcolumn:name="Synced",type=string,JSONPath=`.status.conditions[?(@.type=="Synced")].status`
// +kubebuilder:printcolumn:name="Last Sync",type=date,JSONPath=`.status.lastSyncTime`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type TargetSource struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec TargetSourceSpec `json:"spec"`
	// +optional
	Status TargetSourceStatus `json:"status,omitempty"`
}

// TargetSourceList is a list of TargetSources.
//
// +kubebuilder:object:root=true
type TargetSourceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TargetSource `json:"items"`
}

func init() {
	SchemeBuilder.Register(&TargetSource{}, &TargetSourceList{})
}
