package cluster

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

// What a Cluster's collectors can do is learnt from how they answer, never from their image (docs/collectors.md):
// each collector process is probed once (gnmic.Client.Probe), a push answered "no such route" says the same, and a
// container that exits because its gNMIc has no collect command says it without being asked. A pod whose
// collector has no config apply is never pushed to; the Cluster's CollectorsSupported condition names the pods
// lacking a feature the Cluster uses.

// unknownCommandCollect is how gNMIc before 0.43.0, which has no collect command, ends the collector container:
// cobra's error, which the kubelet keeps as the container's termination message (FallbackToLogsOnError).
const unknownCommandCollect = `unknown command "collect"`

// probeCollectors asks the collector of every pod among ordinals which collector API it serves, when the ledger
// says it is due: once per collector process, and again after a growing wait for one that lacks a feature. A
// collector that cannot be asked now is asked at the next reconcile.
func (r *Reconciler) probeCollectors(ctx context.Context, cluster *operatorv1alpha1.Cluster, w *world, ordinals []int) {
	logger := log.FromContext(ctx)
	for _, ordinal := range ordinals {
		pod := w.pods[ordinal]
		if pod == nil || !r.ledger.APIDue(pod, r.now()) {
			continue
		}
		client, err := r.Dialer.Client(cluster, pod, w.clientTLS())
		if err != nil {
			continue // askCollectors logs it
		}
		level, err := client.Probe(ctx)
		if err != nil {
			logger.V(1).Info("probe collector API", "pod", pod.Name, "error", err.Error())
			continue
		}
		r.ledger.NoteAPI(pod, level, r.now())
		if lacking := level.Lacking(); len(lacking) > 0 {
			logger.Info("collector lacks features of the collector API", "pod", pod.Name, "answersAs", level.Releases(),
				"lacking", lacking, "evidence", level.Evidence)
		}
	}
}

// collectorAPI is what the pod's collector is known to serve: what its process answered, or, for a container
// that exited because its gNMIc has no collect command, the oldest API.
func (r *Reconciler) collectorAPI(pod *corev1.Pod) (gnmic.APILevel, bool) {
	if message, ok := exitedWithoutCollect(pod); ok {
		return gnmic.TooOldForApply("the container exited: " + message), true
	}
	return r.ledger.API(pod)
}

// exitedWithoutCollect is the collector container's last termination message when it says gNMIc has no collect
// command.
func exitedWithoutCollect(pod *corev1.Pod) (string, bool) {
	for _, c := range pod.Status.ContainerStatuses {
		if c.Name != workload.ContainerName {
			continue
		}
		for _, t := range []*corev1.ContainerStateTerminated{c.State.Terminated, c.LastTerminationState.Terminated} {
			if t != nil && strings.Contains(t.Message, unknownCommandCollect) {
				return firstLine(t.Message, unknownCommandCollect), true
			}
		}
	}
	return "", false
}

// firstLine is the line of message that holds what.
func firstLine(message, what string) string {
	for line := range strings.SplitSeq(message, "\n") {
		if strings.Contains(line, what) {
			return strings.TrimSpace(line)
		}
	}
	return strings.TrimSpace(message)
}

// lacksApply tells whether the pod's collector is known to have no config apply: it is then never pushed to.
func (r *Reconciler) lacksApply(pp *podPush) bool {
	level, known := r.collectorAPI(pp.pod)
	if !known || level.Has(gnmic.FeatureConfigApply) {
		return false
	}
	markUnsupported(pp, level)
	return true
}

// noteUnsupported records a push answered "no such route": the collector has no config apply.
func (r *Reconciler) noteUnsupported(pp *podPush, err *gnmic.UnsupportedError) {
	level := gnmic.TooOldForApply(err.Answer)
	r.ledger.NoteAPI(pp.pod, level, r.now())
	markUnsupported(pp, level)
}

// markUnsupported says on the pod that its collector, answering as level, has no config apply: the same words
// whether this reconcile tried or not, so that its readiness gate and status are written once.
func markUnsupported(pp *podPush, level gnmic.APILevel) {
	pp.err = &gnmic.UnsupportedError{Feature: gnmic.FeatureConfigApply, Answer: level.Evidence}
	pp.unsupported = true
	pp.status.Error = fmt.Sprintf("not pushed: %v", pp.err)
}

// wakeForAPIChecks makes sure the Cluster is looked at when the next collector that lacks a feature is due to
// be asked again.
func (r *Reconciler) wakeForAPIChecks(cluster *operatorv1alpha1.Cluster, w *world) {
	var next time.Time
	for _, pod := range w.pods {
		next = earliest(next, r.ledger.NextAPICheck(pod))
	}
	if !next.IsZero() && r.wakes != nil {
		r.wakes.at(client.ObjectKeyFromObject(cluster), next)
	}
}

// usedFeatures are the features of the collector API the Cluster uses, with what uses them.
func usedFeatures(cluster *operatorv1alpha1.Cluster) []gnmic.Feature {
	used := []gnmic.Feature{gnmic.FeatureConfigApply, gnmic.FeatureStateStreams}
	if cluster.Spec.TargetDistribution.WeighBy == operatorv1alpha1.WeighByMeasured {
		used = append(used, gnmic.FeatureResponseCounters)
	}
	if workload.GNMIServerEnabled(cluster) {
		used = append(used, gnmic.FeatureGNMIServer)
	}
	if workload.TunnelEnabled(cluster) {
		used = append(used, gnmic.FeatureTunnelTargetMatches)
	}
	return used
}

// missingFor is what of the Cluster's use a collector answering as level lacks: features, and the types of the
// Outputs and Inputs the Cluster sends that its release does not register, each with the release that has it.
func missingFor(level gnmic.APILevel, used []gnmic.Feature, w *world) []string {
	var out []string
	for _, f := range used {
		if !level.Has(f) {
			out = append(out, fmt.Sprintf("%s (%s)", f, gnmic.FeatureSince(f)))
		}
	}
	for _, t := range sentTypes(w.rendered.Outputs) {
		if since, ok := gnmic.OutputTypes[t]; ok && level.AnswersAs.Before(since) {
			out = append(out, fmt.Sprintf("%s outputs (%s)", t, since))
		}
	}
	for _, t := range sentTypes(w.rendered.Inputs) {
		if since, ok := gnmic.InputTypes[t]; ok && level.AnswersAs.Before(since) {
			out = append(out, fmt.Sprintf("%s inputs (%s)", t, since))
		}
	}
	return out
}

// sentTypes are the distinct types of the outputs or inputs of a configuration, sorted.
func sentTypes(objects map[string]map[string]any) []string {
	var out []string
	for _, o := range objects {
		if t, ok := o["type"].(string); ok && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}

// tooOldGroup is the pods of one image whose collectors answer alike and lack the same.
type tooOldGroup struct {
	image, releases, evidence string
	missing                   []string
	pods                      []string
}

// setCollectorsSupportedCondition says whether the Cluster's collectors have every feature it uses, warns once
// per change of what is missing on which image, and says when nothing is missing any more. A condition the status has is
// kept while no collector's API is known (an operator restart is no news of the collectors).
func (r *Reconciler) setCollectorsSupportedCondition(cluster *operatorv1alpha1.Cluster, w *world, pushed pushResults) {
	used := usedFeatures(cluster)
	groups := map[string]*tooOldGroup{}
	known := 0
	for _, o := range sortedOrdinals(pushed.pods) {
		pod := pushed.pods[o].pod
		level, ok := r.collectorAPI(pod)
		if !ok {
			continue
		}
		known++
		missing := missingFor(level, used, w)
		if len(missing) == 0 {
			continue
		}
		image := podImage(pod)
		key := image + "\x00" + level.Releases() + "\x00" + strings.Join(missing, ",")
		g := groups[key]
		if g == nil {
			g = &tooOldGroup{image: image, releases: level.Releases(), evidence: level.Evidence, missing: missing}
			groups[key] = g
		}
		g.pods = append(g.pods, pod.Name)
	}
	// A copy: SetStatusCondition below changes the condition in place.
	var was *metav1.Condition
	if c := meta.FindStatusCondition(cluster.Status.Conditions, operatorv1alpha1.ConditionCollectorsSupported); c != nil {
		was = c.DeepCopy()
	}
	if known == 0 && was != nil {
		return
	}
	c := metav1.Condition{Type: operatorv1alpha1.ConditionCollectorsSupported, Status: metav1.ConditionTrue,
		Reason: operatorv1alpha1.ReasonCollectorsSupported, ObservedGeneration: cluster.Generation,
		Message: fmt.Sprintf("the %d collector pod(s) that answered have every feature the Cluster uses", known)}
	switch {
	case known == 0:
		c.Status, c.Reason = metav1.ConditionUnknown, operatorv1alpha1.ReasonCollectorsUnread
		c.Message = "no collector pod has answered yet"
	case len(groups) > 0:
		c.Status, c.Reason = metav1.ConditionFalse, operatorv1alpha1.ReasonCollectorTooOld
		c.Message = truncate(tooOldMessage(groups), maxConditionMessage)
	}
	meta.SetStatusCondition(&cluster.Status.Conditions, c)
	memory := r.memoryOf(client.ObjectKeyFromObject(cluster))
	switch {
	case c.Status == metav1.ConditionFalse:
		said := tooOldNews(groups)
		wasFalse := was != nil && was.Status == metav1.ConditionFalse
		// After an operator restart the condition already said it: no news unless what is missing changed.
		if !wasFalse || (memory.saidTooOld != "" && memory.saidTooOld != said) {
			r.Recorder.Event(cluster, corev1.EventTypeWarning, operatorv1alpha1.EventCollectorTooOld, c.Message)
		}
		memory.saidTooOld = said
	case c.Status == metav1.ConditionTrue:
		memory.saidTooOld = ""
		if was != nil && was.Status == metav1.ConditionFalse {
			r.Recorder.Event(cluster, corev1.EventTypeNormal, operatorv1alpha1.EventCollectorsSupported, c.Message)
		}
	}
}

// tooOldNews is what the groups say is missing on which image, without the pods: more pods of an image found
// lacking the same is no news worth a second warning.
func tooOldNews(groups map[string]*tooOldGroup) string {
	return strings.Join(slices.Sorted(maps.Keys(groups)), "\n")
}

// tooOldMessage names, group by group, the pods, their image, the releases they answer as and what they lack,
// then the release the operator needs.
func tooOldMessage(groups map[string]*tooOldGroup) string {
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		g := groups[k]
		parts = append(parts, fmt.Sprintf("pod(s) %s (image %s) answer as gNMIc %s (%s) and lack %s",
			strings.Join(first(g.pods, 10), ", "), g.image, g.releases, g.evidence, strings.Join(g.missing, ", ")))
	}
	return fmt.Sprintf("%s; the operator needs gNMIc %s or newer (for example spec.image: %s)",
		strings.Join(parts, "; "), gnmic.MinimumRelease, gnmic.DefaultImage)
}

// podImage is the image of the pod's collector container.
func podImage(pod *corev1.Pod) string {
	for _, c := range pod.Spec.Containers {
		if c.Name == workload.ContainerName {
			return c.Image
		}
	}
	return ""
}

// reportCollectorAPI sets, in the pod's entry of status.collectors, what its collector answered of its API.
func (r *Reconciler) reportCollectorAPI(status *operatorv1alpha1.CollectorStatus, pod *corev1.Pod) {
	level, ok := r.collectorAPI(pod)
	status.AnswersAs, status.MissingFeatures = "", nil
	if !ok {
		return
	}
	status.AnswersAs = level.Releases()
	for _, f := range level.Lacking() {
		status.MissingFeatures = append(status.MissingFeatures, string(f))
	}
}

func sortedOrdinals[V any](m map[int]V) []int {
	out := make([]int, 0, len(m))
	for o := range m {
		out = append(out, o)
	}
	sort.Ints(out)
	return out
}
