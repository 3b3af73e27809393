package cluster

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/collector"
	"github.com/gnmic-operator/gnmic-operator/internal/fleetmemo"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
)

// writeTargetStatuses records in each Target's status.clusterStates where this Cluster collects it and
// whether it does, writing only the Targets whose entry changed, and removes the entry from Targets the
// Cluster no longer selects.
//
// The writes go out targetStatusWriters at a time, so that the client's rate limit, not the round trips,
// sets their pace. At most targetStatusWritesPerReconcile Targets are written per reconcile; the result says
// whether some were left for the next one: capping them keeps the next batches flowing to the collectors
// when many targets change at once, and a target written later skips the states it went through meanwhile.
func (r *Reconciler) writeTargetStatuses(ctx context.Context, cluster *operatorv1alpha1.Cluster, w *world,
	plan placementPlan, runtimes collectorRuntimes, pushed pushResults) (pass statusPass, err error) {
	now := metav1.NewTime(r.now())
	// What this operator last wrote per Target of the Cluster, while the cache does not show it yet.
	memory := r.memoryOf(client.ObjectKeyFromObject(cluster))
	if memory.written == nil {
		memory.written = map[string]writtenState{}
	}
	if memory.unwrittenSince == nil {
		memory.unwrittenSince = map[string]seenAt{}
	}
	lastWritten, unwritten := memory.written, memory.unwrittenSince
	limit := targetStatusWritesPerReconcile
	if len(pushed.applyingPods()) == 0 {
		limit = settledStatusWritesPerReconcile // no collector waits for the next batch: statuses go first
	}
	// A Target whose status was found right is right still while its entry is worked out from the same placement
	// and the same read of its pod's collector (fleetmemo.StatusKey), except on a Cluster that weighs by
	// Measured, whose entries carry what each scrape measures.
	remember := cluster.Spec.TargetDistribution.WeighBy != operatorv1alpha1.WeighByMeasured
	reads := make(map[int]fleetmemo.CollectorRead, len(runtimes))
	for ordinal, rt := range runtimes {
		reads[ordinal] = fleetmemo.ReadOf(rt.Known, rt.Targets)
	}
	var writes []targetStatusWrite
	// The Targets of the namespace whose status may not be right, with whether the Cluster selects them: the
	// fleet memory's, without a lookup (all of them after a new placement, new picks, or new reads of many
	// collectors).
	onPod := func(ordinal int) []string { return plan.onPod[ordinal] }
	for listed := range memory.fleet.TargetsToCheck(plan.version, reads, remember, onPod) {
		t, selected := listed.Target(), listed.Selected()
		if len(writes) >= limit {
			pass.backlog = true
			continue
		}
		have, had := t.Status.ClusterStates[cluster.Name]
		last, wrote := lastWritten[t.Name]
		wrote = wrote && last.uid == t.UID
		if wrote && had && sameState(have, last.state) {
			delete(lastWritten, t.Name) // the cache shows the write
			wrote = false
		}
		if had || wrote {
			delete(unwritten, t.Name)
		}
		// Until the cache shows this operator's last write, a write would meet a conflict (it is locked on the
		// resourceVersion the cache shows): the Target waits for the cache, looked at again in cacheBehindLook.
		unseen := wrote && t.ResourceVersion == last.over
		if !selected {
			delete(unwritten, t.Name)
			if unseen {
				pass.cacheBehind = true
			} else if had {
				writes = append(writes, targetStatusWrite{target: t})
			} else if !wrote {
				listed.NoteChecked(fleetmemo.StatusKey{})
			}
			continue
		}
		want := targetState(cluster, w, t.Name, plan, runtimes, pushed)
		if had && sameState(have, want) {
			if !wrote && rememberable(want) {
				listed.NoteChecked(statusKey(plan, reads, t.Name))
			}
			continue
		}
		listed.ForgetChecked()
		if !had && !wrote {
			if due, wait := trackFirstStatusWait(unwritten, t, want, now.Time); wait {
				// On its way to its first collector: its first status says where it ended up.
				pass.firstStatusDue = earliest(pass.firstStatusDue, due)
				continue
			}
		}
		if wrote && sameState(last.state, want) {
			continue
		}
		if unseen {
			pass.cacheBehind = true
			continue
		}
		want.LastUpdated = now
		writes = append(writes, targetStatusWrite{target: t, state: &want})
	}
	// Some Target written or waited for before may be gone.
	maps.DeleteFunc(lastWritten, func(name string, last writtenState) bool { return !memory.fleet.Lists(name, last.uid) })
	maps.DeleteFunc(unwritten, func(name string, seen seenAt) bool { return !memory.fleet.Lists(name, seen.uid) })
	done, err := r.patchTargetStates(ctx, cluster.Name, writes)
	for _, wr := range done {
		delete(unwritten, wr.target.Name)
		if wr.state != nil {
			lastWritten[wr.target.Name] = writtenState{uid: wr.target.UID, state: *wr.state, over: wr.target.ResourceVersion}
		} else {
			delete(lastWritten, wr.target.Name)
		}
	}
	return pass, err
}

// statusPass is what writeTargetStatuses leaves for a later reconcile: whether Targets were left unwritten
// by the bound on writes, and when the first of the Targets whose first status waits is due.
type statusPass struct {
	backlog        bool
	firstStatusDue time.Time
	// cacheBehind is true when some Target's entry changed again before the cache showed this operator's last
	// write of it: a look soon writes it, once the cache shows the write.
	cacheBehind bool
}

// seenAt is when this process first found a Target (by UID: a Target made again under the same name is
// another) in some state.
type seenAt struct {
	uid types.UID
	at  time.Time
}

// trackFirstStatusWait records in unwritten since when this process has found a Target without an entry on
// its way to its first collector (onItsWay), and tells whether its first entry still waits (for
// firstStatusWait from then) and until when. A Target that is not on its way, or has waited long enough, gets
// its entry at once.
func trackFirstStatusWait(unwritten map[string]seenAt, t *operatorv1alpha1.Target, want operatorv1alpha1.TargetClusterState,
	now time.Time) (due time.Time, wait bool) {
	if !onItsWay(want) {
		return time.Time{}, false
	}
	seen, ok := unwritten[t.Name]
	if !ok || seen.uid != t.UID {
		seen = seenAt{uid: t.UID, at: now}
		unwritten[t.Name] = seen
	}
	due = seen.at.Add(firstStatusWait)
	return due, now.Before(due)
}

// writtenState is the entry last written to a Target (by UID: a Target made again under the same name is
// another).
type writtenState struct {
	uid   types.UID
	state operatorv1alpha1.TargetClusterState
	// over is the resourceVersion the write was locked on: while the cache shows it, the cache does not show
	// the write, and another write would meet a conflict.
	over string
}

// statusKey is what a selected target's entry is worked out from besides its name: the placement, and the last
// read of its pod's collector.
func statusKey(plan placementPlan, reads map[int]fleetmemo.CollectorRead, name string) fleetmemo.StatusKey {
	ordinal, ok := plan.assignment(name)
	if !ok {
		ordinal = -1
	}
	return fleetmemo.NewStatusKey(plan.version, ordinal, reads[ordinal])
}

// rememberable tells whether an entry is worked out from its statusKey alone: not one that waits for a push
// (pendingReason reads this reconcile's pushes) or that the rendering skipped (its reason is the rendering's).
func rememberable(st operatorv1alpha1.TargetClusterState) bool {
	return st.State != operatorv1alpha1.TargetPending && st.State != operatorv1alpha1.TargetSkipped
}

// targetStatusWritesPerReconcile bounds the Target status writes of one reconcile while collectors still
// work off their changes (see writeTargetStatuses): about a second of the default client rate limit.
// settledStatusWritesPerReconcile bounds them once every collector runs what it was sent: about ten
// seconds' worth, since the reconcile has nothing more urgent to do.
const (
	targetStatusWritesPerReconcile  = 200
	settledStatusWritesPerReconcile = 2000
)

// targetStatusWriters is how many Target status writes are under way at once. With 8, the round trips to a
// busy API server, not the client's rate limit, set the pace of a bulk arrival's statuses (make bench-bulk,
// 5,000 Targets: every status right 16.0–16.6 s after the last create with 8, 11.8–12.4 s with 32).
const targetStatusWriters = 32

// firstStatusWait is how long a Target's status may stay without an entry for the Cluster while the Target
// is on its way to its first collector, from when this process first found it so (not from its creation: an
// operator installed or restarted over Targets made long before, or a Cluster created over them, takes them
// the same way). Targets created in bulk, or taken at a cold start, then cost one status write each instead
// of two or three (no pod ready yet, sent, starting, collecting), which the client's rate limit and the API
// server's CPU would make the slowest part of their arrival. A target still on its way after that shows where
// it waits.
const firstStatusWait = 10 * time.Second

// onItsWay tells whether a target's state is one it normally leaves within moments on its way to its first
// collector: no collector pod ready yet (a Cluster's pods starting), handed from one pod to another (a pod
// that became ready after the first took it: the Cluster's pods starting one after another), sent to its
// collector and not started yet, or starting.
func onItsWay(st operatorv1alpha1.TargetClusterState) bool {
	return (st.State == operatorv1alpha1.TargetUnassigned && st.Message == noPodReady) ||
		(st.State == operatorv1alpha1.TargetPending && (st.Message == notStartedYet || st.Message == waitingForPreviousPod)) ||
		(st.State == operatorv1alpha1.TargetAssigned && !st.Collecting && st.Message == "starting")
}

// targetStatusWrite is one Cluster entry to set in a Target's status; a nil state removes the entry.
type targetStatusWrite struct {
	target *operatorv1alpha1.Target
	state  *operatorv1alpha1.TargetClusterState
}

// patchTargetStates makes the writes, targetStatusWriters at a time, and gives those that succeeded. Every
// write is tried; the first error is returned.
func (r *Reconciler) patchTargetStates(ctx context.Context, cluster string, writes []targetStatusWrite) ([]targetStatusWrite, error) {
	var (
		mu    sync.Mutex
		done  = make([]targetStatusWrite, 0, len(writes))
		first error
		wg    sync.WaitGroup
		next  = make(chan targetStatusWrite)
	)
	for range min(targetStatusWriters, len(writes)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for wr := range next {
				err := r.patchTargetState(ctx, wr.target, cluster, wr.state)
				mu.Lock()
				if err != nil {
					first = cmp.Or(first, err)
				} else {
					done = append(done, wr)
				}
				mu.Unlock()
			}
		}()
	}
	for _, wr := range writes {
		next <- wr
	}
	close(next)
	wg.Wait()
	return done, first
}

// targetState is a target's entry for this Cluster: Assigned only when its pod's collector runs it, and
// collecting only when that collector says so.
func targetState(cluster *operatorv1alpha1.Cluster, w *world, name string, plan placementPlan, runtimes collectorRuntimes,
	pushed pushResults) operatorv1alpha1.TargetClusterState {
	st := placementState(cluster, w, name, plan, runtimes, pushed)
	if o, ok := plan.last[name]; ok {
		st.LastPod = w.podName(cluster, o)
	}
	if w.weights.Weighed() {
		st.Weight, st.WeightSource = int32(w.weights.Weight(name)), w.weights.Source[name]
	}
	if rate, ok := w.responseRates[name]; ok {
		st.ResponseRate = formatRate(rate)
	}
	return st
}

// placementState is a target's entry for this Cluster but its last pod.
func placementState(cluster *operatorv1alpha1.Cluster, w *world, name string, plan placementPlan, runtimes collectorRuntimes,
	pushed pushResults) operatorv1alpha1.TargetClusterState {
	if skip, skipped := w.skippedTarget(name); skipped {
		return operatorv1alpha1.TargetClusterState{State: operatorv1alpha1.TargetSkipped,
			Message: "not sent to any collector: " + skip.Err.Error()}
	}
	ordinal, ok := plan.assignment(name)
	if !ok {
		return operatorv1alpha1.TargetClusterState{State: operatorv1alpha1.TargetUnassigned, Message: unassignedReason(w, name, plan)}
	}
	want := operatorv1alpha1.TargetClusterState{Pod: w.podName(cluster, ordinal)}
	if _, held := plan.held[name]; held {
		want.State = operatorv1alpha1.TargetOrphaned
		want.Message = "its collector pod is not ready; it keeps the target for the grace period"
		return want
	}
	if st, runs := runtimes.runs(ordinal, name); runs {
		want.State = operatorv1alpha1.TargetAssigned
		want.ConnectionState = st.ConnectionState
		want.Collecting = st.Collecting()
		want.Message = notCollecting(st)
		if stale := staleSubscriptions(st); len(stale) > 0 && w.responsesRising != nil &&
			w.pods[ordinal] != nil && w.responsesRising(name, w.pods[ordinal].UID) {
			// gNMIc can show a subscription stopped while its data flows (a stale state); its response
			// counter is the ground truth.
			want.Collecting = true
			want.Message = "collecting: its responses keep counting though subscription " + strings.Join(stale, ", ") +
				" shows " + gnmic.SubscriptionStopped
		}
		return want
	}
	want.State = operatorv1alpha1.TargetPending
	want.Message = pendingReason(name, pushed.pods[ordinal], runtimes[ordinal])
	return want
}

// unassignedReason says why a target has no pod: there is none to have (the Cluster is scaled to zero, or
// none of its pods is ready), it weighs more than a fixed podCapacity, or every pod is full.
func unassignedReason(w *world, name string, plan placementPlan) string {
	switch {
	case len(w.desired) == 0:
		return "the Cluster is scaled to zero"
	case len(plan.result.Load) == 0:
		return noPodReady
	case slices.Contains(plan.result.Oversized, name):
		return fmt.Sprintf("its weight %d is above podCapacity %d: no collector pod can take it", w.weights.Weight(name),
			plan.result.Capacity)
	case w.weights.Weighed():
		return fmt.Sprintf("no collector pod has room for its weight %d", w.weights.Weight(name))
	}
	return "every collector pod is at capacity"
}

// noPodReady is why a target of a Cluster none of whose pods is ready has no pod.
const noPodReady = "no collector pod is ready"

// notCollecting says why a target its collector runs delivers no telemetry; empty when it does.
func notCollecting(st gnmic.TargetStatus) string {
	var because string
	if st.FailedReason != "" {
		because = ": " + st.FailedReason
	}
	switch {
	case st.Collecting():
		return ""
	case st.Failed():
		return "start failed" + because
	case st.State == gnmic.StateStarting || st.State == "":
		return "starting"
	case st.ConnectionState != gnmic.ConnectionReady:
		return "connection " + cmpOr(st.ConnectionState, "not established") + because
	case len(st.Subscriptions) == 0:
		return "runs no subscription"
	}
	var stopped []string
	for sub, state := range st.Subscriptions {
		if state != gnmic.SubscriptionRunning {
			stopped = append(stopped, sub)
		}
	}
	sort.Strings(stopped)
	return "subscription " + strings.Join(stopped, ", ") + " " + gnmic.SubscriptionStopped + because
}

// staleSubscriptions are the subscriptions a running target shows stopped while its connection is READY:
// what a stale state looks like, and also what a device that ended a stream looks like. Only the target's
// response counter tells them apart. Empty when the target is not in that state.
func staleSubscriptions(st gnmic.TargetStatus) []string {
	if st.State != gnmic.StateRunning || st.ConnectionState != gnmic.ConnectionReady {
		return nil
	}
	var stopped []string
	for sub, state := range st.Subscriptions {
		if state != gnmic.SubscriptionRunning {
			stopped = append(stopped, sub)
		}
	}
	sort.Strings(stopped)
	return stopped
}

// pendingReason says what a target placed on a pod whose collector does not run it waits for.
func pendingReason(name string, pp *podPush, rt collector.Runtime) string {
	switch {
	case pp == nil || !pp.considered:
		return "its collector pod cannot be reached"
	case pp.err != nil:
		return "the configuration push to its collector pod failed"
	case !rt.Known:
		return "its collector's state could not be read"
	case slices.Contains(pp.step.Waiting, name):
		return waitingForPreviousPod
	case slices.Contains(pp.step.Repaired, name):
		return "dropped by its collector; sent again"
	}
	return notStartedYet
}

// notStartedYet is why a target its collector acknowledged is not listed by it yet.
const notStartedYet = "not started by its collector yet"

// waitingForPreviousPod is why a target handed over between two pods is not sent to the new one yet.
const waitingForPreviousPod = "waiting for its previous collector pod to drop it"

func cmpOr(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

func sameState(a, b operatorv1alpha1.TargetClusterState) bool {
	return a.Pod == b.Pod && a.LastPod == b.LastPod && a.State == b.State && a.ConnectionState == b.ConnectionState &&
		a.Collecting == b.Collecting && a.Message == b.Message && a.Weight == b.Weight && a.WeightSource == b.WeightSource &&
		sameRate(a.ResponseRate, b.ResponseRate)
}

// patchTargetState sets (or, with nil, removes) one Cluster's entry of a Target's status, with optimistic
// locking so that two Clusters writing the same Target never lose each other's entry. The Target given may be
// the cache's own: it is only read; the patch carries what changes only (targetStatePatch), and the API
// server's answer is decoded into a new object.
func (r *Reconciler) patchTargetState(ctx context.Context, listed *operatorv1alpha1.Target, cluster string,
	state *operatorv1alpha1.TargetClusterState) error {
	patch, err := targetStatePatch(listed, cluster, state)
	if err != nil {
		return fmt.Errorf("status patch of target %s: %w", listed.Name, err)
	}
	// The API server answers with the patched object, which nothing reads: asked as metadata only, the answer
	// is decoded at a fraction of a whole Target's cost (a status write of 5,000 Targets at once is the bulk of
	// the operator's CPU).
	t := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: listed.Namespace, Name: listed.Name}}
	t.SetGroupVersionKind(operatorv1alpha1.GroupVersion.WithKind("Target"))
	if err := r.Status().Patch(ctx, t, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("write status of target %s: %w", t.Name, err)
	}
	return nil
}

// summarize gives the Target's printer columns: how many Clusters hold it and its worst state.
func summarize(states map[string]operatorv1alpha1.TargetClusterState) (int32, string) {
	rank := map[string]int{operatorv1alpha1.TargetAssigned: 0, operatorv1alpha1.TargetPending: 1,
		operatorv1alpha1.TargetOrphaned: 2, operatorv1alpha1.TargetUnassigned: 3, operatorv1alpha1.TargetSkipped: 4}
	var holding int32
	worst := ""
	for _, s := range states {
		if s.State == operatorv1alpha1.TargetAssigned {
			holding++
		}
		if worst == "" || rank[s.State] > rank[worst] {
			worst = s.State
		}
	}
	return holding, worst
}

// removeFromTargetStatuses removes a deleted Cluster's entries from the status of the Targets of its namespace,
// writing each Target that had one.
func (r *Reconciler) removeFromTargetStatuses(ctx context.Context, deleted types.NamespacedName) error {
	namespace, cluster := deleted.Namespace, deleted.Name
	var targets operatorv1alpha1.TargetList
	// Every Target of the namespace, most without an entry of the Cluster: patchTargetState copies those it
	// writes.
	if err := r.List(ctx, &targets, client.InNamespace(namespace), client.UnsafeDisableDeepCopy); err != nil {
		return fmt.Errorf("list targets: %w", err)
	}
	for i := range targets.Items {
		if _, ok := targets.Items[i].Status.ClusterStates[cluster]; ok {
			if err := r.patchTargetState(ctx, &targets.Items[i], cluster, nil); err != nil {
				return err
			}
		}
	}
	return nil
}
