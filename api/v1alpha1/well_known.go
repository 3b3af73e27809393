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
	// EventStatefulSetNameTaken: the StatefulSet a domain needs (<cluster>-<domain>) is another Cluster's.
	EventStatefulSetNameTaken = "StatefulSetNameTaken"
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
