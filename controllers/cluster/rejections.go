package cluster

import (
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/internal/rejection"
	"github.com/gnmic-operator/gnmic-operator/internal/selection"
)

// A refusal every pod shares (the collectors refuse the outputs, inputs and processors every pod receives
// alike, which no collector of the Cluster accepted) is the configuration's fault: nothing moves and the pods
// stay Ready (readiness_gates.go). The Cluster's verdict on that part says which Outputs and Inputs the
// refusal is blamed on (rejection.Blame); the Pipelines that select them (here) and the objects themselves
// (acceptance.go) say so in their conditions.

// sharedVerdict is what the Cluster's collectors last said of the part of the configuration every pod
// receives alike (outputs, inputs, processors).
type sharedVerdict struct {
	// known is false until, since the operator started, a collector accepted that part or every collector
	// refused it.
	known bool
	// refused is true while the collectors refuse it: message is their error, blamed the Outputs and Inputs
	// the refusal is blamed on, and basis why.
	refused bool
	message string
	blamed  []rejection.Object
	basis   rejection.Basis
	// accepted fingerprints each Output and Input of that part as the collectors last accepted it.
	accepted map[rejection.Key]string
}

// blames tells whether the refusal is blamed on the named Output or Input.
func (v sharedVerdict) blames(kind, name string) bool {
	for _, o := range v.blamed {
		if o.Kind == kind && o.Name == name {
			return true
		}
	}
	return false
}

// blamedOn names the objects a refusal is blamed on, for the Cluster's own condition ("" when none is).
func blamedOn(v sharedVerdict) string {
	if !v.refused || len(v.blamed) == 0 {
		return ""
	}
	var names []string
	for _, o := range first(v.blamed, 5) {
		names = append(names, o.Kind+" "+o.Name)
	}
	if len(v.blamed) > 5 {
		names = append(names, fmt.Sprintf("and %d more", len(v.blamed)-5))
	}
	return fmt.Sprintf(" (blamed on %s, %s)", strings.Join(names, ", "), v.basis)
}

// judgeSharedPart updates the Cluster's verdict from this reconcile's pushes: refused when every pod
// refuses the shared part, accepted when a collector holds its configuration; unchanged when neither is
// known (no pod was pushed).
func (r *Reconciler) judgeSharedPart(w *world, memory *clusterMemory, results pushResults) {
	if shared := results.sharedRejections(); len(shared) > 0 {
		message := rejectionOf(results, shared[0])
		var tried gnmic.Config
		for _, pp := range results.pods {
			if pp.pod.Name == shared[0] {
				tried = pp.tried
			}
		}
		blamed, basis := rejection.Blame(message, w.sharedObjects(tried), memory.verdict.accepted)
		memory.verdict = sharedVerdict{known: true, refused: true, message: message, blamed: blamed, basis: basis,
			accepted: memory.verdict.accepted}
		return
	}
	ordinals := make([]int, 0, len(results.pods))
	for ordinal := range results.pods {
		ordinals = append(ordinals, ordinal)
	}
	sort.Ints(ordinals)
	for _, ordinal := range ordinals {
		pp := results.pods[ordinal]
		if !pp.considered || pp.err != nil {
			continue
		}
		if e, ok := r.ledger.Acknowledged(pp.pod); ok {
			accepted := map[rejection.Key]string{}
			for _, o := range w.sharedObjects(e.Config) {
				accepted[o.Key] = o.Fingerprint
			}
			memory.verdict = sharedVerdict{known: true, accepted: accepted}
			return
		}
	}
}

// sharedObjects are the Outputs and Inputs of a configuration, each with a fingerprint of how it was
// rendered.
func (w *world) sharedObjects(cfg gnmic.Config) []rejection.Object {
	var out []rejection.Object
	for name, o := range cfg.Outputs {
		out = append(out, rejection.Object{Key: rejection.Key{Kind: rejection.KindOutput, Name: name},
			Fingerprint: w.fingerprintOrNone(gnmic.Config{Outputs: map[string]map[string]any{name: o}})})
	}
	for name, in := range cfg.Inputs {
		out = append(out, rejection.Object{Key: rejection.Key{Kind: rejection.KindInput, Name: name},
			Fingerprint: w.fingerprintOrNone(gnmic.Config{Inputs: map[string]map[string]any{name: in}})})
	}
	return out
}

// configurationAccepted is a Pipeline's ConfigurationAccepted condition from the Cluster's verdict, nil when
// the verdict is not known yet.
func configurationAccepted(p *operatorv1alpha1.Pipeline, own selection.Summary, cluster string, v sharedVerdict) *metav1.Condition {
	if !v.known {
		return nil
	}
	cond := &metav1.Condition{Type: operatorv1alpha1.ConditionConfigurationAccepted, Status: metav1.ConditionTrue,
		Reason:             operatorv1alpha1.ReasonConfigurationAccepted,
		Message:            fmt.Sprintf("the collectors of Cluster %s take the Outputs and Inputs it selects", cluster),
		ObservedGeneration: p.Generation}
	if !v.refused {
		return cond
	}
	var blamed []string
	for _, name := range own.Outputs {
		if v.blames(rejection.KindOutput, name) {
			blamed = append(blamed, rejection.KindOutput+" "+name)
		}
	}
	for _, name := range own.Inputs {
		if v.blames(rejection.KindInput, name) {
			blamed = append(blamed, rejection.KindInput+" "+name)
		}
	}
	if len(blamed) == 0 {
		return cond
	}
	sort.Strings(blamed)
	cond.Status, cond.Reason = metav1.ConditionFalse, operatorv1alpha1.ReasonConfigurationRejected
	cond.Message = truncate(fmt.Sprintf("the collectors of Cluster %s refuse the configuration with %s (%s): %s", cluster,
		strings.Join(blamed, ", "), v.basis, v.message), maxConditionMessage)
	return cond
}
