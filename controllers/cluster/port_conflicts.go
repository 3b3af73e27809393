package cluster

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/internal/render"
	"github.com/gnmic-operator/gnmic-operator/internal/selection"
)

// portConflict is an output the Cluster refused because its port is taken.
type portConflict struct {
	output string
	taken  render.PortTakenError
}

func (p portConflict) String() string {
	return fmt.Sprintf("Output %s %s: it is sent to no collector", p.output, p.taken.Error())
}

// portConflicts are the outputs left out of the configuration because their listening port is taken, by name.
func (w *world) portConflicts() []portConflict {
	var out []portConflict
	for _, s := range w.skips {
		var taken render.PortTakenError
		if s.Kind == selection.KindOutput && errors.As(s.Err, &taken) {
			out = append(out, portConflict{output: s.Name, taken: taken})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].output < out[j].output })
	return out
}

// setOutputPortsCondition says whether the Cluster's outputs all have their port, naming both sides of each
// conflict, and raises a warning event when the conflicts change.
func (r *Reconciler) setOutputPortsCondition(cluster *operatorv1alpha1.Cluster, w *world) {
	if w.renderErr != nil {
		return
	}
	c := metav1.Condition{Type: operatorv1alpha1.ConditionOutputPortsAvailable, Status: metav1.ConditionTrue,
		Reason: operatorv1alpha1.ReasonPortsFree, Message: "no two outputs, nor an output and the collectors' servers, listen on one port",
		ObservedGeneration: cluster.Generation}
	conflicts := w.portConflicts()
	if len(conflicts) > 0 {
		parts := make([]string, 0, len(conflicts))
		for _, p := range conflicts {
			parts = append(parts, p.String())
		}
		c.Status, c.Reason = metav1.ConditionFalse, operatorv1alpha1.ReasonPortConflict
		c.Message = truncate(strings.Join(parts, "; "), maxConditionMessage)
	}
	memory := r.memoryOf(client.ObjectKeyFromObject(cluster))
	was := meta.FindStatusCondition(cluster.Status.Conditions, operatorv1alpha1.ConditionOutputPortsAvailable)
	if len(conflicts) > 0 && memory.saidPortConflicts != c.Message && (was == nil || was.Message != c.Message) {
		r.Recorder.Event(cluster, corev1.EventTypeWarning, operatorv1alpha1.EventOutputPortConflict, c.Message)
	}
	memory.saidPortConflicts = ""
	if len(conflicts) > 0 {
		memory.saidPortConflicts = c.Message
	}
	meta.SetStatusCondition(&cluster.Status.Conditions, c)
}

// judgePort keeps the Cluster's entry in an Output's status.portConflicts (present while the Cluster refuses it
// for its port), drops entries of Clusters that no longer exist (exists nil keeps every other entry), and sets
// its PortAvailable condition from the list. Only Outputs that listen on some Cluster's collectors, or had a
// conflict, carry the condition; it is never removed, so that Clusters that do not send the Output leave what
// the others said.
func judgePort(a acceptance, cluster string, conflict *portConflict, listens bool, exists map[string]bool) {
	if a.portConflicts == nil {
		return
	}
	var kept []operatorv1alpha1.ConfigurationRejection
	for _, e := range *a.portConflicts {
		if e.Cluster != cluster && (exists == nil || exists[e.Cluster]) {
			kept = append(kept, e)
		}
	}
	if conflict != nil {
		kept = append(kept, operatorv1alpha1.ConfigurationRejection{Cluster: cluster,
			Message: truncate(fmt.Sprintf("%s %s", a.name, conflict.taken.Error()), maxRejectionMessage)})
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].Cluster < kept[j].Cluster })
	*a.portConflicts = kept

	if !listens && len(kept) == 0 && meta.FindStatusCondition(*a.conditions, operatorv1alpha1.ConditionPortAvailable) == nil {
		return // nothing is known of it: it listens on no Cluster's collectors seen so far
	}
	cond := metav1.Condition{Type: operatorv1alpha1.ConditionPortAvailable, Status: metav1.ConditionTrue,
		Reason: operatorv1alpha1.ReasonPortsFree, Message: "its port is free on the collectors of every Cluster that sends to it",
		ObservedGeneration: a.generation}
	if len(kept) > 0 {
		parts := make([]string, 0, len(kept))
		for _, e := range kept {
			parts = append(parts, fmt.Sprintf("Cluster %s: %s", e.Cluster, e.Message))
		}
		cond.Status, cond.Reason = metav1.ConditionFalse, operatorv1alpha1.ReasonPortConflict
		cond.Message = truncate("sent to no collector of these Clusters: "+strings.Join(parts, "; "), maxConditionMessage)
	}
	meta.SetStatusCondition(a.conditions, cond)
	*a.observedGeneration = a.generation
}

// portVerdict is what the Cluster says of an Output's port: its conflict, if it refuses the Output for it, and
// whether the Output, as the Cluster sends it, listens.
func (w *world) portVerdict(name string) (*portConflict, bool) {
	for _, p := range w.portConflicts() {
		if p.output == name {
			return &p, true
		}
	}
	o, sent := w.rendered.Outputs[name]
	if !sent {
		return nil, false
	}
	_, listens := gnmic.OutputListenPort(o)
	return nil, listens
}
