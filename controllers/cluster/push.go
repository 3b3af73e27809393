package cluster

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/collector"
	"github.com/gnmic-operator/gnmic-operator/internal/fleetmemo"
	"github.com/gnmic-operator/gnmic-operator/internal/fleetmetrics"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/internal/handover"
	"github.com/gnmic-operator/gnmic-operator/internal/render"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

// Defaults of the collector settings (Reconciler.PollInterval, BatchSize, DropTimeout, RepairAfter).
const (
	// DefaultPollInterval is how often every collector is read when nothing else happens.
	DefaultPollInterval = 60 * time.Second
	// DefaultBatchSize stays under the 128 target changes the real collector's config watcher buffers
	// (changes beyond it are dropped without an error), with room for changes it has not acted on yet.
	DefaultBatchSize = 100
	// DefaultDropTimeout bounds how long a moved target waits for its old collector to drop it. A device that
	// never completes its handshake holds every change of its collector for about 20 s.
	DefaultDropTimeout = 60 * time.Second
	// DefaultRepairAfter is how long a collector may act on none of its outstanding changes before they count
	// as dropped: longer than a target start that runs into the handshake's timeout.
	DefaultRepairAfter = 60 * time.Second
)

// podPush is what happened to one collector pod's configuration in this reconcile.
type podPush struct {
	pod *corev1.Pod
	// status is the pod's entry for Cluster status.collectors after this reconcile.
	status operatorv1alpha1.CollectorStatus
	// considered is true for the pods the operator pushes to; step is then their handover step.
	considered bool
	step       handover.Step
	pushed     bool
	err        error
	// pushFailed is true when the apply itself failed: the collector refused it or could not be reached.
	// rejected is true when the collector refused the configuration (400); sharedRejection when the part
	// every pod shares (outputs, inputs, processors) is what no collector of the Cluster accepted, so that
	// every pod would refuse it: then the pods keep serving what they hold and stay Ready.
	pushFailed, rejected, sharedRejection bool
	// unsupported is true when the pod's collector has no config apply (collector_api.go): it is not pushed to,
	// and err says so every reconcile alike.
	unsupported bool
	// sharedPart fingerprints the outputs, inputs and processors of the configuration last tried; tried is
	// that configuration.
	sharedPart string
	tried      gnmic.Config
	// refusingSince is set for a pod left out of placement because it refused its configuration for longer
	// than the grace period: since when it refuses.
	refusingSince time.Time
}

// pushResults are the outcomes of one reconcile's pushes.
type pushResults struct {
	pods map[int]*podPush
	// skipped are targets (and other objects) left out of every configuration because they do not render.
	skipped  []render.SkipError
	decision handover.Decision
}

func (p pushResults) failedPods() []string {
	return p.podNames(func(pp *podPush) bool { return pp.err != nil })
}

// retriedPods are the failed pods a retry with backoff may mend: all but those whose collector has no config
// apply, which are asked again on a schedule of their own (collector.Ledger.APIDue).
func (p pushResults) retriedPods() []string {
	return p.podNames(func(pp *podPush) bool { return pp.err != nil && !pp.unsupported })
}

// sharedRejections are the pods that refused a configuration every pod would refuse.
func (p pushResults) sharedRejections() []string {
	return p.podNames(func(pp *podPush) bool { return pp.err != nil && pp.sharedRejection })
}

// applyingPods are the pods whose collectors do not run their whole configuration yet.
func (p pushResults) applyingPods() []string {
	return p.podNames(func(pp *podPush) bool { return pp.considered && pp.err == nil && !pp.step.Settled })
}

func (p pushResults) podNames(match func(*podPush) bool) []string {
	var out []string
	for _, pp := range p.pods {
		if match(pp) {
			out = append(out, pp.pod.Name)
		}
	}
	sort.Strings(out)
	return out
}

// podConfigs is one pod's rendered configuration and what its collector acknowledged.
type podConfigs struct {
	rendered gnmic.Config
	// sent is the configuration the collector acknowledged; nil when only the names of its targets are known
	// (sentNames), after an operator restart.
	sent      *gnmic.Config
	sentNames []string
	// key identifies rendered (fleetmemo.Memo.Subset); sentID identifies sent: the fingerprint of what the
	// collector acknowledged, "unknown" when sent is nil and "nothing" for a collector that holds nothing.
	key    fleetmemo.PodKey
	sentID string
}

// push moves every pod the operator pushes to one handover step towards the placement: each collector gets
// at most a batch of target changes beyond what it has not acted on yet, and a target moves onto its new pod
// only once its old collector no longer holds it (see internal/handover).
func (r *Reconciler) push(ctx context.Context, cluster *operatorv1alpha1.Cluster, w *world, plan placementPlan,
	runtimes collectorRuntimes, ordinals []int) pushResults {
	key := client.ObjectKeyFromObject(cluster)
	memory := r.memoryOf(key)
	results := pushResults{pods: r.collectorStatuses(cluster, w), skipped: w.skips}
	configs := map[int]podConfigs{}
	in := handover.Input{BatchSize: r.BatchSize, DropTimeout: r.DropTimeout, RepairAfter: r.RepairAfter, Now: r.now(),
		HeldElsewhere: r.heldByTerminatingPods(ctx, cluster, w)}
	for _, ordinal := range ordinals {
		pp := results.pods[ordinal]
		pp.considered = true
		pc, err := r.podConfigs(w, &memory.fleet, ordinal, pp, plan.version, plan.onPod[ordinal], runtimes[ordinal])
		c := handover.Collector{Ordinal: ordinal, Sent: pc.sentNames, RunningKnown: runtimes[ordinal].Known,
			Running: runtimes[ordinal].Names()}
		if !c.RunningKnown {
			c.Running = r.ledger.LastRunning(pp.pod)
		}
		if err != nil {
			// Nothing can be sent to the pod: it keeps what it holds, which still counts against moves.
			pp.err = err
			pp.status.Error = err.Error()
			c.Desired = pc.sentNames
		} else {
			key := fleetmemo.ChangesKey{Pod: pc.key, Placement: plan.version, Sent: pc.sentID}
			if !pc.sentNamed() {
				key.SentNames = memory.fleet.Names(pc.sentNames)
			}
			c.Desired, c.Changed = memory.fleet.Changes(ordinal, key, func() (desired, changed []string) {
				return desiredAndChanged(plan.onPod[ordinal], pc)
			})
		}
		configs[ordinal] = pc
		in.Collectors = append(in.Collectors, c)
	}
	results.decision = handover.Decide(in, memory.handover)
	memory.handover = results.decision.Memory

	for _, step := range results.decision.Steps {
		pp := results.pods[step.Ordinal]
		pp.step = step
		if pp.err == nil && !r.lacksApply(pp) {
			r.applyStep(ctx, cluster, w, &memory.fleet, pp, configs[step.Ordinal])
		}
	}
	memory.fleet.ForgetPods(func(ordinal int) bool { return w.pods[ordinal] != nil })
	r.classifyRejections(w, results)
	r.trackRefusals(key, memory, plan, results)
	r.judgeSharedPart(w, memory, results)
	return results
}

// collectorStatuses starts every pod's entry of status.collectors from the previous status of the same pod.
func (r *Reconciler) collectorStatuses(cluster *operatorv1alpha1.Cluster, w *world) map[int]*podPush {
	previous := map[string]operatorv1alpha1.CollectorStatus{}
	for _, c := range cluster.Status.Collectors {
		previous[c.Pod] = c
	}
	out := map[int]*podPush{}
	for ordinal, pod := range w.pods {
		ready, _ := podReadiness(pod)
		pp := &podPush{pod: pod, status: operatorv1alpha1.CollectorStatus{Pod: pod.Name, Ready: ready}}
		if prev, ok := previous[pod.Name]; ok && prev.UID == string(pod.UID) {
			pp.status = prev
			pp.status.Ready = ready
		}
		out[ordinal] = pp
	}
	return out
}

// sentUnknown is the sentID of a collector whose acknowledged configuration is not known, only the targets it
// runs.
const sentUnknown = "unknown"

// podConfigs cuts what the pod should hold, together with what it still holds, from the fleet's rendered
// configuration, and finds what its collector acknowledged: from the ledger; after an operator restart from
// Cluster status (when it acknowledged exactly the configuration now desired) or from what the collector
// runs; nothing for a new pod or a restarted container, which hold only their bootstrap configuration.
func (r *Reconciler) podConfigs(w *world, fleet *fleetmemo.Memo, ordinal int, pp *podPush, placement uint64, desired []string,
	rt collector.Runtime) (podConfigs, error) {
	var pc podConfigs
	prior, fromStatus := []string(nil), false
	if e, ok := r.ledger.Acknowledged(pp.pod); ok {
		pc.sent, pc.sentID = &e.Config, e.Hash
		prior = e.TargetNames()
	} else if pp.status.UID == string(pp.pod.UID) && pp.status.Restarts == workload.CollectorRestarts(pp.pod) && pp.status.ConfigHash != "" {
		fromStatus, pc.sentID = true, sentUnknown
		for name := range rt.Targets {
			prior = append(prior, name)
		}
	} else {
		pc.sent, pc.sentID = &gnmic.Config{}, "nothing"
	}
	pc.sentNames = prior
	if w.renderErr != nil {
		return pc, fmt.Errorf("render configuration: %w", w.renderErr)
	}
	names := func() []string { return append(append([]string(nil), desired...), prior...) }
	if !fromStatus {
		// desired follows from the placement, prior from what the collector acknowledged (pc.sentID).
		pc.rendered, pc.key = fleet.SubsetOf(ordinal, w.rendered, placement, pc.sentID, names)
	} else {
		// prior is what the collector runs, read now.
		pc.rendered, pc.key = fleet.Subset(ordinal, w.rendered, names())
		// Restarted operator: the pod acknowledged a configuration whose fingerprint status kept. When it is exactly
		// the desired one, the pod holds its desired targets as they are now rendered.
		final := render.Subset(w.rendered, desired)
		if hash, err := w.fingerprint(final); err == nil && hash == pp.status.ConfigHash {
			pc.sent, pc.sentNames, pc.sentID = &final, final.TargetNames(), hash
			r.ledger.Record(pp.pod, final, hash)
		}
	}
	return pc, nil
}

// sentNamed tells whether sentID names the acknowledged targets: a fingerprint of the whole configuration, or
// "nothing"; after an operator restart, "unknown" does not.
func (pc podConfigs) sentNamed() bool { return pc.sentID != sentUnknown }

// desiredAndChanged are the placed targets that render, and those of them whose configuration differs from
// the one the collector acknowledged (all that were sent, when that configuration is not known).
func desiredAndChanged(onPod []string, pc podConfigs) (desired, changed []string) {
	sent := setOf(pc.sentNames)
	for _, name := range onPod {
		t, ok := pc.rendered.Targets[name]
		if !ok {
			continue
		}
		desired = append(desired, name)
		if !sent[name] {
			continue
		}
		if pc.sent == nil || !reflect.DeepEqual(pc.sent.Targets[name], t) {
			changed = append(changed, name)
		}
	}
	return desired, changed
}

// applyStep sends the pod the configuration of its handover step, unless its collector acknowledged exactly
// that configuration already.
func (r *Reconciler) applyStep(ctx context.Context, cluster *operatorv1alpha1.Cluster, w *world, fleet *fleetmemo.Memo, pp *podPush, pc podConfigs) {
	logger := log.FromContext(ctx).WithValues("pod", pp.pod.Name)
	key := fleetmemo.StepKey{Pod: pc.key, Sent: pc.sentID}
	if pp.step.Settled && pc.sentNamed() {
		key.Resend = true // Send is what was acknowledged, Update is empty
	} else {
		key.Send, key.Update = fleet.Names(pp.step.Send), fleet.Names(pp.step.Update)
	}
	var (
		encoded gnmic.Encoded // the step's encoding, when it was made now: the push sends it as is
		made    bool
	)
	cfg, hash, err := fleet.Step(pp.step.Ordinal, key, func() (gnmic.Config, string, error) {
		e, err := gnmic.Encode(stepConfig(pc, pp.step))
		if err != nil {
			return gnmic.Config{}, "", err
		}
		encoded, made = e, true
		return e.Config, e.Fingerprint(w.fingerprintKey), nil
	})
	if err != nil {
		pp.err = fmt.Errorf("fingerprint configuration: %w", err)
		pp.status.Error = pp.err.Error()
		return
	}
	if e, ok := r.ledger.Acknowledged(pp.pod); ok && e.Hash == hash {
		// Acknowledged already; status may have missed the write that said so (a conflict), and it is all a
		// restarted operator will know. An error status still shows is an earlier push's: the collector holds
		// this configuration.
		pp.status.UID, pp.status.Restarts = string(pp.pod.UID), workload.CollectorRestarts(pp.pod)
		pp.status.Targets, pp.status.ConfigHash = int32(len(cfg.Targets)), hash
		pp.status.Error = ""
		return
	}
	client, err := r.Dialer.Client(cluster, pp.pod, w.clientTLS())
	if err == nil && !made { // a remembered step whose last push failed: encode it again
		encoded, err = gnmic.Encode(cfg)
	}
	if err == nil {
		started := time.Now()
		err = client.ApplyEncoded(ctx, encoded)
		fleetmetrics.PushDuration.WithLabelValues(pushResult(err)).Observe(time.Since(started).Seconds())
	}
	if err != nil {
		pp.err = fmt.Errorf("push configuration to pod %s: %w", pp.pod.Name, err)
		pp.status.Error = pp.err.Error()
		var (
			rejected    *gnmic.ConfigRejectedError
			unsupported *gnmic.UnsupportedError
		)
		pp.pushFailed, pp.rejected = true, errors.As(err, &rejected)
		pp.sharedPart, pp.tried = w.sharedPart(cfg), cfg
		if errors.As(err, &unsupported) {
			r.noteUnsupported(pp, unsupported)
			logger.Info("collector has no config apply: not pushed to again before it is probed", "answer", unsupported.Answer)
			return
		}
		logger.Error(err, "push failed")
		return
	}
	now := metav1.NewTime(r.now())
	pp.pushed = true
	pp.status = operatorv1alpha1.CollectorStatus{
		Pod: pp.pod.Name, UID: string(pp.pod.UID), Restarts: workload.CollectorRestarts(pp.pod), Ready: pp.status.Ready,
		Targets: int32(len(cfg.Targets)), ConfigHash: hash, LastApplied: &now,
	}
	r.ledger.Record(pp.pod, cfg, hash)
	logger.Info("configuration applied", "targets", len(cfg.Targets), "added", len(pp.step.Added),
		"removed", len(pp.step.Removed)+len(pp.step.Repaired), "updated", len(pp.step.Update)-len(pp.step.Added),
		"queued", pp.step.Queued, "waiting", len(pp.step.Waiting), "hash", hash)
}

// pushResult is the result label of a push's duration.
func pushResult(err error) string {
	var rejected *gnmic.ConfigRejectedError
	switch {
	case err == nil:
		return fleetmetrics.PushApplied
	case errors.As(err, &rejected):
		return fleetmetrics.PushRejected
	default:
		return fleetmetrics.PushFailed
	}
}

// classifyRejections tells, for every pod that refused its configuration, whether the refusal is one every
// pod shares: its outputs, inputs and processors are not what any collector of the Cluster accepted. A
// rejection of a shared part that another collector holds is the pod's own (or its targets').
func (r *Reconciler) classifyRejections(w *world, results pushResults) {
	accepted := map[string]bool{}
	for _, pp := range results.pods {
		if e, ok := r.ledger.Acknowledged(pp.pod); ok {
			accepted[w.sharedPart(e.Config)] = true
		}
	}
	for _, pp := range results.pods {
		pp.sharedRejection = pp.rejected && !accepted[pp.sharedPart]
	}
}

// stepConfig is the configuration that carries a handover step: the step's targets, the updated and added
// ones as rendered now and the others exactly as the collector acknowledged them, with every subscription
// and output they name.
func stepConfig(pc podConfigs, step handover.Step) gnmic.Config {
	cfg := gnmic.Config{
		Targets:       map[string]gnmic.TargetConfig{},
		Subscriptions: map[string]gnmic.SubscriptionConfig{},
		Outputs:       map[string]map[string]any{},
		Inputs:        pc.rendered.Inputs,
		Processors:    pc.rendered.Processors,
		// The tunnel-target-matches are the same on every pod and take effect at once: no handover step
		// applies to devices, which stay on the pod their tunnel reached.
		TunnelTargetMatches: pc.rendered.TunnelTargetMatches,
	}
	for name, s := range pc.rendered.Subscriptions {
		cfg.Subscriptions[name] = s
	}
	for name, o := range pc.rendered.Outputs {
		cfg.Outputs[name] = o
	}
	update := setOf(step.Update)
	for _, name := range step.Send {
		t, rendered := pc.rendered.Targets[name]
		if pc.sent != nil {
			if old, ok := pc.sent.Targets[name]; ok && (!update[name] || !rendered) {
				t, rendered = old, true
			}
		}
		if rendered {
			cfg.Targets[name] = t
		}
	}
	if pc.sent != nil {
		// A target kept as it was sent may name a subscription or output that is no longer rendered.
		for _, t := range cfg.Targets {
			for _, s := range t.Subscriptions {
				if _, ok := cfg.Subscriptions[s]; !ok {
					if old, ok := pc.sent.Subscriptions[s]; ok {
						cfg.Subscriptions[s] = old
					}
				}
			}
			for _, o := range t.Outputs {
				if _, ok := cfg.Outputs[o]; !ok {
					if old, ok := pc.sent.Outputs[o]; ok {
						cfg.Outputs[o] = old
					}
				}
			}
		}
	}
	return cfg.Normalize()
}

// countRunning sets, for every pod pushed to, how many of its placed targets its collector runs and how many
// it does not run yet, from the collectors' state as read after the pushes.
func (p pushResults) countRunning(plan placementPlan, runtimes collectorRuntimes) {
	for ordinal, pp := range p.pods {
		if pp.considered {
			pp.status.Running, pp.status.Pending = runningAndPending(plan.onPod[ordinal], runtimes[ordinal])
		}
	}
}

// runningAndPending counts the pod's placed targets its collector runs, and those it does not run yet.
func runningAndPending(onPod []string, rt collector.Runtime) (running, pending int32) {
	if rt.ListsExactly(onPod) { // it runs every one of them
		return int32(len(onPod)), 0
	}
	for _, name := range onPod {
		if _, ok := rt.Targets[name]; ok && rt.Known {
			running++
		} else {
			pending++
		}
	}
	return running, pending
}
