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
