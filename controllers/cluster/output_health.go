package cluster

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/fleetmetrics"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/internal/rejection"
)

// outputHealth is what the collectors of a Cluster report of the Outputs and Inputs they were sent: a
// collector answers 200 to a configuration whose output it cannot start, keeps its targets running, and
// sends nothing to that output; only its output and input state streams say so (collector.Streams).
type outputHealth struct {
	// watched is false when the reconciler follows no collector streams (a reconciler without a manager):
	// nothing is reported then.
	watched bool
	// pods are the pods whose output and input states are known, sorted; none known means nothing can be
	// concluded.
	pods []string
	// failures are the objects the pods hold and report failed, sorted by kind, name and pod.
	failures []componentFailure
	// tooOld are the objects the Cluster sends that its collectors are too old for (their type, or the state
	// streams that tell whether they run), by kind/name: the pods, sorted, and why (collector_api.go).
	tooOld map[string]objectFailure
}

// componentFailure is one Output or Input that one pod's collector holds and could not start.
type componentFailure struct {
	kind, name, pod, reason string
}

func (f componentFailure) key() string { return f.kind + "/" + f.name + "/" + f.pod }

// known tells whether any collector's output and input states are known.
func (h outputHealth) known() bool { return len(h.pods) > 0 }

// readOutputHealth reads, for every pod the operator pushes to, the states its collector streams of the
// outputs and inputs the operator sent it (what the collector acknowledged): those it reports failed are
// failures. A pod whose streams are not connected, or that acknowledged nothing yet, is not known.
func (r *Reconciler) readOutputHealth(w *world, ordinals []int) outputHealth {
	if r.streams == nil {
		return outputHealth{}
	}
	h := outputHealth{watched: true}
	for _, ordinal := range ordinals {
		pod := w.pods[ordinal]
		if pod == nil {
			continue
		}
		if level, ok := r.collectorAPI(pod); ok {
			h.addTooOld(pod.Name, level, w)
		}
		states, known := r.streams.Components(pod)
		entry, acked := r.ledger.Acknowledged(pod)
		if !known || !acked {
			continue
		}
		h.pods = append(h.pods, pod.Name)
		for _, part := range []struct {
			kind, streamed string
			sent           map[string]map[string]any
		}{
			{rejection.KindOutput, gnmic.KindOutputs, entry.Config.Outputs},
			{rejection.KindInput, gnmic.KindInputs, entry.Config.Inputs},
		} {
			for name := range part.sent {
				if st, ok := states[part.streamed][name]; ok && st.Failed() {
					h.failures = append(h.failures, componentFailure{kind: part.kind, name: name, pod: pod.Name, reason: st.FailedReason})
				}
			}
		}
	}
	sort.Strings(h.pods)
	sort.Slice(h.failures, func(i, j int) bool { return h.failures[i].key() < h.failures[j].key() })
	return h
}

// addTooOld notes the Outputs and Inputs the Cluster sends that the pod's collector, answering as level, is too
// old for.
func (h *outputHealth) addTooOld(pod string, level gnmic.APILevel, w *world) {
	for _, part := range []struct {
		kind    string
		types   map[string]gnmic.Release
		objects map[string]map[string]any
	}{
		{rejection.KindOutput, gnmic.OutputTypes, w.rendered.Outputs},
		{rejection.KindInput, gnmic.InputTypes, w.rendered.Inputs},
	} {
		for name, cfg := range part.objects {
			typ, _ := cfg["type"].(string)
			why := tooOldFor(level, part.kind, typ, part.types)
			if why == "" {
				continue
			}
			if h.tooOld == nil {
				h.tooOld = map[string]objectFailure{}
			}
			key := part.kind + "/" + name
			o := h.tooOld[key]
			o.kind, o.name, o.pods, o.reasons = part.kind, name, append(o.pods, pod), []string{why}
			h.tooOld[key] = o
		}
	}
}

// tooOldFor is why a collector answering as level cannot run an Output or Input of type typ, or cannot say
// whether it runs; "" when it can.
func tooOldFor(level gnmic.APILevel, kind, typ string, since map[string]gnmic.Release) string {
	lacks := func(what string, release gnmic.Release) string {
		return fmt.Sprintf("collectors answering as gNMIc %s have no %s (gNMIc %s or newer has it)", level.Releases(), what, release)
	}
	switch release, known := since[typ]; {
	case !level.Has(gnmic.FeatureConfigApply):
		return lacks("config apply: nothing is sent to them", gnmic.FeatureSince(gnmic.FeatureConfigApply))
	case known && level.AnswersAs.Before(release):
		return lacks(fmt.Sprintf("%s of type %s", strings.ToLower(kind), typ), release)
	case !level.Has(gnmic.FeatureStateStreams):
		return lacks("state streams: whether it runs is never known", gnmic.FeatureSince(gnmic.FeatureStateStreams))
	}
	return ""
}

// tooOldOf is the object's pods whose collectors are too old for it.
func (h outputHealth) tooOldOf(kind, name string) (objectFailure, bool) {
	o, ok := h.tooOld[kind+"/"+name]
	if ok {
		sort.Strings(o.pods)
	}
	return o, ok
}

// kindProcessor names Processors in failures blamed on them.
const kindProcessor = "Processor"

// blaming is the failures of the Outputs and Inputs whose collector reason names the Processor (gNMIc's
// `"<name>" event processor not found`, `"<name>" event processor has an unknown type=…`, `failed initializing
// event processor '<name>' …`), put on the Processor.
func (h outputHealth) blaming(processor string) outputHealth {
	out := outputHealth{watched: h.watched, pods: h.pods}
	quoted, initializing := `"`+processor+`" event processor`, `event processor '`+processor+`'`
	for _, f := range h.failures {
		if strings.Contains(f.reason, quoted) || strings.Contains(f.reason, initializing) {
			out.failures = append(out.failures, componentFailure{kind: kindProcessor, name: processor, pod: f.pod,
				reason: fmt.Sprintf("%s %s: %s", f.kind, f.name, f.reason)})
		}
	}
	return out
}

// objectFailure is one object's failures on a Cluster: the pods, sorted, and their distinct reasons.
type objectFailure struct {
	kind, name string
	pods       []string
	reasons    []string
}

// byObject groups the failures by object, in kind and name order.
func (h outputHealth) byObject() []objectFailure {
	var out []objectFailure
	for _, f := range h.failures {
		if n := len(out); n == 0 || out[n-1].kind != f.kind || out[n-1].name != f.name {
			out = append(out, objectFailure{kind: f.kind, name: f.name})
		}
		o := &out[len(out)-1]
		if !slices.Contains(o.pods, f.pod) {
			o.pods = append(o.pods, f.pod)
		}
		if !slices.Contains(o.reasons, f.reason) {
			o.reasons = append(o.reasons, f.reason)
		}
	}
	for i := range out {
		sort.Strings(out[i].pods)
	}
	return out
}

// of is the failure of one object, if its collectors report one.
func (h outputHealth) of(kind, name string) (objectFailure, bool) {
	for _, o := range h.byObject() {
		if o.kind == kind && o.name == name {
			return o, true
		}
	}
	return objectFailure{}, false
}

func (o objectFailure) String() string {
	return fmt.Sprintf("%s %s failed to start on pod(s) %s: %s", o.kind, o.name, strings.Join(first(o.pods, 10), ", "),
		strings.Join(o.reasons, "; "))
}

// setOutputsRunningCondition says whether every Output and Input the Cluster's collectors hold started. Until
// the operator knew some collector's states once (knownOnce), a condition the status already has stays: after an
// operator restart the collectors' streams take a moment to connect, and what the operator before read is
// still the best knowledge there is.
func setOutputsRunningCondition(cluster *operatorv1alpha1.Cluster, h outputHealth, knownOnce bool) {
	if !h.watched {
		return
	}
	if !h.known() && !knownOnce && meta.FindStatusCondition(cluster.Status.Conditions, operatorv1alpha1.ConditionOutputsRunning) != nil {
		return
	}
	c := metav1.Condition{Type: operatorv1alpha1.ConditionOutputsRunning, Status: metav1.ConditionTrue,
		Reason: operatorv1alpha1.ReasonOutputsRunning, ObservedGeneration: cluster.Generation,
		Message: fmt.Sprintf("no output or input failed to start on the %d collector pod(s) whose state is known", len(h.pods))}
	switch objects := h.byObject(); {
	case !h.known():
		c.Status, c.Reason = metav1.ConditionUnknown, operatorv1alpha1.ReasonCollectorsUnread
		c.Message = "the output and input states of no ready collector pod are known yet"
	case len(objects) > 0:
		parts := make([]string, len(objects))
		for i, o := range objects {
			parts[i] = o.String()
		}
		c.Status, c.Reason = metav1.ConditionFalse, operatorv1alpha1.ReasonOutputsFailed
		c.Message = truncate(strings.Join(parts, "; ")+"; their targets keep running and nothing reaches them from those pods",
			maxConditionMessage)
	}
	meta.SetStatusCondition(&cluster.Status.Conditions, c)
}

// reportOutputHealth raises a Warning event (on the Cluster and on the object) for every Output or Input that
// newly failed on some pods, or failed for a new reason, and a Normal one once none is failed any more; and
// sets the failed outputs and inputs per pod in the metrics. What it last reported is remembered per Cluster,
// and kept while no collector's state is known.
func (r *Reconciler) reportOutputHealth(cluster *operatorv1alpha1.Cluster, w *world, h outputHealth) {
	if !h.watched {
		return
	}
	m := r.memoryOf(client.ObjectKeyFromObject(cluster))
	m.failedMetricPods = setFailedComponentMetrics(cluster, m.failedMetricPods, h)
	if !h.known() {
		return
	}
	if m.failedComponents == nil {
		m.failedComponents = announcedFailures(cluster.Name, w)
	}
	now := make(map[string]string, len(h.failures))
	for _, f := range h.failures {
		now[f.key()] = f.reason
	}
	for _, o := range h.byObject() {
		var fresh []string
		for _, pod := range o.pods {
			f := componentFailure{kind: o.kind, name: o.name, pod: pod}
			if reason, seen := m.failedComponents[f.key()]; !seen || reason != now[f.key()] {
				fresh = append(fresh, pod)
			}
		}
		if len(fresh) == 0 {
			continue
		}
		reason := operatorv1alpha1.EventOutputFailed
		if o.kind == rejection.KindInput {
			reason = operatorv1alpha1.EventInputFailed
		}
		msg := fmt.Sprintf("%s %s failed to start on pod(s) %s: %s; their targets keep running and nothing reaches it from "+
			"those pods", o.kind, o.name, strings.Join(first(fresh, 10), ", "), strings.Join(o.reasons, "; "))
		r.Recorder.Event(cluster, corev1.EventTypeWarning, reason, msg)
		if obj := w.objectNamed(o.kind, o.name); obj != nil {
			r.Recorder.Event(obj, corev1.EventTypeWarning, reason, fmt.Sprintf("Cluster %s: %s", cluster.Name, msg))
		}
	}
	if len(now) == 0 && len(m.failedComponents) > 0 {
		r.Recorder.Event(cluster, corev1.EventTypeNormal, operatorv1alpha1.EventOutputsRunning,
			"no collector pod reports an output or input that failed to start any more")
	}
	m.failedComponents = now
}

// announcedFailures is what the statuses of the Outputs and Inputs say the Cluster's collectors reported
// failed (kind/name/pod → reason): what the operator before this one announced. The first read of the
// collectors after an operator restart so announces only what changed since, and a failure that ended
// meanwhile is told to have ended.
func announcedFailures(cluster string, w *world) map[string]string {
	out := map[string]string{}
	add := func(kind, name string, entries []operatorv1alpha1.ComponentFailure) {
		for _, e := range entries {
			if e.Cluster != cluster {
				continue
			}
			for _, pod := range e.Pods {
				out[componentFailure{kind: kind, name: name, pod: pod}.key()] = e.Reason
			}
		}
	}
	for i := range w.objects.Outputs {
		add(rejection.KindOutput, w.objects.Outputs[i].Name, w.objects.Outputs[i].Status.FailedOn)
	}
	for i := range w.objects.Inputs {
		add(rejection.KindInput, w.objects.Inputs[i].Name, w.objects.Inputs[i].Status.FailedOn)
	}
	return out
}

// setFailedComponentMetrics sets the failed outputs and inputs of every pod whose state is known, drops the
// series of the pods in before (those it set last time) that are not among them, and gives the pods it set.
func setFailedComponentMetrics(cluster *operatorv1alpha1.Cluster, before []string, h outputHealth) []string {
	outputs, inputs := map[string]int{}, map[string]int{}
	for _, f := range h.failures {
		if f.kind == rejection.KindInput {
			inputs[f.pod]++
		} else {
			outputs[f.pod]++
		}
	}
	return fleetmetrics.SetFailedComponents(cluster.Namespace, cluster.Name, before, h.pods, outputs, inputs)
}

// objectNamed is the Output or Input of that kind and name, nil when the namespace has none.
func (w *world) objectNamed(kind, name string) runtime.Object {
	if kind == rejection.KindInput {
		for i := range w.objects.Inputs {
			if w.objects.Inputs[i].Name == name {
				return &w.objects.Inputs[i]
			}
		}
		return nil
	}
	for i := range w.objects.Outputs {
		if w.objects.Outputs[i].Name == name {
			return &w.objects.Outputs[i]
		}
	}
	return nil
}

// judgeRunning sets one Output's or Input's failedOn entry for the Cluster and its Running condition: the
// Cluster's entry is there while its collectors report the object failed, kept as it is while no collector's
// state is known, and dropped otherwise (also when the Cluster does not send the object). Entries of Clusters
// that no longer exist are dropped (exists nil keeps every other entry).
func judgeRunning(a acceptance, cluster string, sent bool, exists map[string]bool, h outputHealth) {
	var kept []operatorv1alpha1.ComponentFailure
	old, tooOld := h.tooOldOf(a.kind, a.name)
	tooOld = tooOld && sent
	for _, e := range *a.failedOn {
		switch {
		case e.Cluster == cluster:
			if sent && !h.known() && !tooOld {
				kept = append(kept, e)
			}
		case exists == nil || exists[e.Cluster]:
			kept = append(kept, e)
		}
	}
	// Collectors too old for the object say more than their reason for failing it ("unknown output type").
	if o, failed := h.of(a.kind, a.name); tooOld {
		kept = append(kept, operatorv1alpha1.ComponentFailure{Cluster: cluster, Pods: first(old.pods, 16),
			PodCount: int32(len(old.pods)), Reason: truncate(strings.Join(old.reasons, "; "), 2048), CollectorTooOld: true})
	} else if sent && h.known() && failed {
		kept = append(kept, operatorv1alpha1.ComponentFailure{Cluster: cluster, Pods: first(o.pods, 16),
			PodCount: int32(len(o.pods)), Reason: truncate(strings.Join(o.reasons, "; "), 2048)})
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].Cluster < kept[j].Cluster })
	*a.failedOn = kept

	cond := metav1.Condition{Type: operatorv1alpha1.ConditionRunning, Status: metav1.ConditionTrue,
		Reason:             operatorv1alpha1.ReasonRunningOnCollectors,
		Message:            fmt.Sprintf("no collector that holds this %s reports it failed to start", a.kind),
		ObservedGeneration: a.generation}
	if len(kept) > 0 {
		var failed, old []string
		for _, e := range kept {
			part := fmt.Sprintf("Cluster %s, pod(s) %s: %s", e.Cluster, strings.Join(e.Pods, ", "), e.Reason)
			if e.CollectorTooOld {
				old = append(old, part)
			} else {
				failed = append(failed, part)
			}
		}
		cond.Status, cond.Reason = metav1.ConditionFalse, operatorv1alpha1.ReasonFailedOnCollectors
		var parts []string
		if len(old) > 0 {
			cond.Reason = operatorv1alpha1.ReasonCollectorTooOld
			parts = append(parts, "the collectors are too old for it: "+strings.Join(old, "; "))
		}
		if len(failed) > 0 {
			parts = append(parts, "the collectors took it and could not start it, their targets run without it: "+
				strings.Join(failed, "; "))
		}
		cond.Message = truncate(strings.Join(parts, "; "), maxConditionMessage)
	} else if !(sent && h.known()) && meta.FindStatusCondition(*a.conditions, operatorv1alpha1.ConditionRunning) == nil {
		return // nothing is known of it yet
	}
	meta.SetStatusCondition(a.conditions, cond)
	*a.observedGeneration = a.generation
}
