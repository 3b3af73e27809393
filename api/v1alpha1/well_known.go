package v1alpha1

// Labels the operator puts on the objects it creates.
const (
	// ClusterLabel carries the name of the Cluster a collector pod (or any object the operator made for a
	// Cluster) belongs to. status.selector of a Cluster is "ClusterLabel=<name>".
	ClusterLabel = "operator.gnmic.dev/cluster"
	// DomainLabel carries the domain (spec.domains[].name) of a collector pod and of its StatefulSet, on
	// Clusters with domains only.
	DomainLabel = "operator.gnmic.dev/domain"
)

// Ownership of the objects the operator writes (docs/security.md, "Ownership").
const (
	// OwnerAnnotation names, as "<Kind>/<name>", the Cluster or TargetSource an object the operator made
	// belongs to. The operator writes and deletes an object of a name it needs only when the object is
	// controlled by that owner, or, without a controller reference, when this annotation names the owner: a
	// user sets it on an existing object to hand it over.
	OwnerAnnotation = "operator.gnmic.dev/owner"
	// ConditionResourcesOwned (Cluster, TargetSource) is True while every object the owner needs is the
	// operator's or could be created, False (reason ReasonNameTaken) while an object of a name it needs exists
	// and is someone else's: that object is left exactly as it is, and the message names its kind and name.
	ConditionResourcesOwned = "ResourcesOwned"
	ReasonResourcesOwned    = "ResourcesOwned"
	ReasonNameTaken         = "NameTaken"
	// EventNameTaken (Warning) says, once per change of them, which objects of the names the owner needs are
	// someone else's.
	EventNameTaken = "NameTaken"
	// EventNamesFree (Normal) says that no object the owner needs is someone else's any more.
	EventNamesFree = "NamesFree"
)

// Condition types of a Cluster.
const (
	// ConditionReady is True when every desired collector pod is ready and holds its configuration.
	ConditionReady = "Ready"
	// ConditionConfigApplied is True when every ready collector pod acknowledged its current configuration;
	// when False its message names the pods that did not.
	ConditionConfigApplied = "ConfigApplied"
	// ConditionCapacityExhausted is True when some targets could not be assigned because every pod is at
	// capacity.
	ConditionCapacityExhausted = "CapacityExhausted"
	// ConditionOutputsRunning is True when every Output and Input the collector pods hold started on them,
	// False (reason ReasonOutputsFailed) while a pod's collector reports one failed to start; the message names
	// the objects, the pods and the collectors' reasons. Unknown while no collector's state can be read.
	ConditionOutputsRunning = "OutputsRunning"
	// ConditionCollectorsSupported is True when every collector pod whose API is known has every feature of
	// the collector API the Cluster uses (docs/collectors.md), False (reason ReasonCollectorTooOld) while a
	// pod's collector answers as an older gNMIc release: the message names the pods, their image, what they
	// lack and the release that has it. What a collector has is learnt from how it answers, never from its
	// image. Unknown (reason ReasonCollectorsUnread) until some collector answered.
	ConditionCollectorsSupported = "CollectorsSupported"
)

// Condition reasons of a Cluster.
const (
	ReasonInsufficientCapacity = "InsufficientCapacity"
	ReasonSufficientCapacity   = "SufficientCapacity"
	// ReasonNoReadyPods (CapacityExhausted False): no collector pod is ready yet, so no target can be placed;
	// that is not a lack of capacity, and the autoscaler is not asked for more pods by this condition.
	ReasonNoReadyPods = "NoReadyPods"
	// ReasonScaledToZero (CapacityExhausted False): the Cluster has 0 replicas; its targets are not collected,
	// by choice.
	ReasonScaledToZero = "ScaledToZero"
	// ReasonOutputsRunning (OutputsRunning True): every Output and Input the collectors hold started.
	ReasonOutputsRunning = "Running"
	// ReasonOutputsFailed (OutputsRunning False): collectors accepted an Output or Input and could not start
	// it; their targets keep running and pods stay Ready, but nothing reaches that Output from them.
	ReasonOutputsFailed = "OutputsFailed"
	// ReasonCollectorsUnread (OutputsRunning Unknown): no ready collector's output and input states are known.
	ReasonCollectorsUnread = "CollectorsUnread"
	// ReasonCollectorsSupported (CollectorsSupported True): no collector lacks a feature the Cluster uses.
	ReasonCollectorsSupported = "Supported"
	// ReasonCollectorTooOld: a collector answers as a gNMIc release older than a feature needs. It is the
	// reason of the Cluster's CollectorsSupported condition, of a collector pod's readiness gate when the
	// collector has no config apply, and of the Running condition of an Output, Input or TunnelTargetPolicy
	// that needs what the Cluster's collectors lack.
	ReasonCollectorTooOld = "CollectorTooOld"
)

// Event reasons a user sees in `kubectl describe cluster`.
const (
	// EventTargetsMoved: placement moved targets to other pods; the message names them (the first ten) and
	// the lower bound of moves.
	EventTargetsMoved = "TargetsMoved"
	// EventTargetsReturned: targets went back to the pod they belong on (status.clusterStates[].lastPod) once
	// it was ready again, after a restart or a pod unready past the grace period.
	EventTargetsReturned = "TargetsReturned"
	// EventWeightsChanged: on a Cluster that weighs by Measured, targets' measured rates stayed outside their
	// weights' bands for the hysteresis time and their weights followed; the message names them (the first
	// ten) with their old and new weights and rates.
	EventWeightsChanged = "WeightsChanged"
	// EventCapacityExhausted: targets could not be assigned, every pod is at capacity.
	EventCapacityExhausted = "CapacityExhausted"
	// EventCapacityRestored: every target is assigned to a pod again.
	EventCapacityRestored = "CapacityRestored"
	// EventPushFailed: a pod's configuration could not be pushed; the message has the collector's words.
	EventPushFailed = "PushFailed"
	// EventTargetsSkipped: objects are left out of the configuration because they do not render.
	EventTargetsSkipped = "TargetsSkipped"
	// EventConfigurationRejected: the collectors refuse what every pod receives alike (a bad Output, say).
	EventConfigurationRejected = "ConfigurationRejected"
	// EventOutputFailed: a collector pod reports an Output it accepted failed to start; the message has the
	// collector's reason. Also recorded on the Output.
	EventOutputFailed = "OutputFailed"
	// EventInputFailed: a collector pod reports an Input it accepted failed to start. Also on the Input.
	EventInputFailed = "InputFailed"
	// EventOutputsRunning: every Output and Input that had failed on the Cluster's collectors runs again (or
	// is no longer sent).
	EventOutputsRunning = "OutputsRunning"
	// EventTargetsRepaired: a collector dropped targets it was sent (its change buffer overflowed, or it lost
	// them otherwise); they are removed and sent again.
	EventTargetsRepaired = "TargetsRepaired"
	// EventHandoverOverlap: a moved target went to its new pod although its old collector had not confirmed
	// dropping it within the drop timeout: both may collect it for a while.
	EventHandoverOverlap = "HandoverOverlap"
	// EventStaleTargets: a collector runs targets it was not sent (it dropped their removal).
	EventStaleTargets = "StaleTargets"
	// EventRefusingPodEmptied: a pod refused its configuration for reasons of its own (other pods take the
	// same outputs) for longer than the grace period; its targets move to other pods.
	EventRefusingPodEmptied = "RefusingPodEmptied"
	// EventAPIInsecure warns, once per reason, that a Cluster opted out of TLS on its collector API.
	EventAPIInsecure = "APIInsecure"
	// EventTargetTLSTooLarge: the TLS files of the Cluster's targets do not all fit in its target TLS Secret;
	// the targets of the TLS Secrets left out are skipped.
	EventTargetTLSTooLarge = "TargetTLSTooLarge"
	// EventDomainFallbackStarted: a domain's pods did not start within the startup timeout; its replicas run
	// in the other domains.
	EventDomainFallbackStarted = "DomainFallbackStarted"
	// EventDomainFallbackEnded: the blocked domains' pods started; the replacements go.
	EventDomainFallbackEnded = "DomainFallbackEnded"
	// EventCollectorTooOld: collector pods answer as a gNMIc release that lacks a feature the Cluster uses;
	// once per change of the images or features concerned.
	EventCollectorTooOld = "CollectorTooOld"
	// EventCollectorsSupported: no collector pod lacks a feature the Cluster uses any more.
	EventCollectorsSupported = "CollectorsSupported"
	// EventGomplateRemoved (Warning, on the Output) is emitted when an Output's TemplatesSupported condition
	// turns False: one of its templates calls functions gNMIc 0.46.0 removed with gomplate, or does not parse.
	EventGomplateRemoved = "GomplateRemoved"
	// EventShardTakenOver: under sharding (docs/sharding.md), an operator replica took the Cluster over.
	EventShardTakenOver = "ShardTakenOver"
	// EventShardDrained: under sharding, the replica that reconciled the Cluster let it go for the next one.
	EventShardDrained = "ShardDrained"
)

// ConditionPodConfigured is the condition type of the readiness gate every collector pod carries
// (spec.readinessGates): True once the pod acknowledged its current configuration, False with the push
// error as its message when it refused it or could not be reached. The kubelet reports a pod Ready only
// when its containers are ready and this condition is True, so a rolling update or a drain waits for each
// pod to hold its targets before it takes down the next one.
const ConditionPodConfigured = "operator.gnmic.dev/configured"

// Reasons of the ConditionPodConfigured pod condition.
const (
	// ReasonPodConfigApplied: the pod holds the configuration the operator last gave it.
	ReasonPodConfigApplied = "Applied"
	// ReasonPodConfigPushFailed: the configuration could not be rendered or pushed; the message says why.
	ReasonPodConfigPushFailed = "PushFailed"
	// ReasonPodConfigRejected: the collector refused a configuration that every pod of the Cluster refuses (a
	// bad Output, say); a pod that held its configuration keeps it, and its gate, until the error is fixed.
	ReasonPodConfigRejected = "ConfigurationRejected"
	// ReasonPodConfigApplying: the pod's collector does not run its whole configuration yet (batches still to
	// send, targets waiting for their old pod to drop them, or targets the collector dropped being sent again).
	ReasonPodConfigApplying = "Applying"
)

// Target states per Cluster, as reported in Target status.clusterStates.
const (
	// TargetAssigned: the target's collector pod runs it (status.clusterStates.<cluster>.collecting says
	// whether it also delivers telemetry).
	TargetAssigned = "Assigned"
	// TargetPending: the target is placed on a collector pod that does not run it yet: it waits for its batch,
	// for its previous pod to drop it, or for the collector to start it. The message says which.
	TargetPending = "Pending"
	// TargetUnassigned: every pod was at capacity; the target is not collected by this Cluster.
	TargetUnassigned = "Unassigned"
	// TargetSkipped: the target's configuration cannot be rendered (a missing Secret or key, a missing
	// profile, a Subscription the collector cannot take): it is sent to no collector and takes no capacity.
	// The message says what is wrong.
	TargetSkipped = "Skipped"
	// TargetOrphaned: the target's pod stopped being ready; it keeps the target for a grace period.
	TargetOrphaned = "Orphaned"
)
