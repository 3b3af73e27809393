package selection

import (
	"iter"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// Prepared is what a Cluster's selection holds that does not depend on its
// Targets: the enabled Pipelines in name order, the Subscriptions, Outputs,
// Inputs and Processors they select, the processor chains, how each Pipeline
// picks Targets, and the problems of all these. Resolve is, in three steps:
//
//	p := Prepare(cluster, objects)        // tens of objects
//	pick := p.Target(t)                   // for every Target, one at a time
//	sel := p.Selection(targetsWithPicks)  // assembles the Selection
//
// A pick depends only on the Prepared and on the Target's name and labels, so
// a caller may keep a Prepared while its Key is unchanged and, with it, reuse
// the pick of every Target whose name and labels are unchanged: the Selection
// is then the one Resolve returns, without redoing the unchanged Targets.
//
// A Prepared points into the Objects it was prepared from, as a Selection
// does: a kept Prepared keeps pointing at the objects of the call that made it,
// which are the same as the current ones while the Key is unchanged. Its
// methods may be called concurrently.
type Prepared struct {
	key       string
	pipelines []targetChooser
	// targetRefs are the targetRefs of the pipelines, each with the problem
	// it is if no Target has its name.
	targetRefs []targetRef
	// sel is the Selection without its Targets and Problems; problems are the
	// problems that do not depend on Targets.
	sel      Selection
	problems map[string]bool

	// selectedBefore is how many targets the last Selection selected: the
	// room to make for the next one.
	selectedBefore atomic.Int64

	mu sync.Mutex
	// combinations are what a set of pipelines picking a Target apply to it,
	// keyed by the pipelines' indexes (see Target).
	combinations map[string]*combination
}

type targetRef struct{ name, problem string }

// Prepare returns what the enabled Pipelines of the Cluster named cluster
// select among in apart from Targets: in.Targets is ignored.
func Prepare(cluster string, in Objects) *Prepared {
	r := newResolver(in)
	pipelines := pipelinesOf(cluster, in.Pipelines)
	for _, p := range pipelines {
		r.add(p)
	}
	r.finish()
	p := &Prepared{
		key:          keyOf(cluster, pipelines, in),
		pipelines:    r.pipelines,
		sel:          r.sel,
		problems:     r.problems,
		combinations: make(map[string]*combination),
	}
	for _, pl := range pipelines {
		for _, ref := range choiceOf(pl, KindTarget).refs {
			p.targetRefs = append(p.targetRefs, targetRef{ref, targetRefProblem(pl.Name, ref)})
		}
	}
	return p
}

// Key identifies everything a Prepared depends on: the Cluster's name and the
// name, UID, generation and labels of its enabled Pipelines and of every
// Subscription, Output, Input and Processor. Two Prepared with the same Key
// are interchangeable, since the API server moves an object's generation on
// every change of its spec, and the selection reads nothing else of them but
// their names and labels. Their statuses, which the operator writes, are not
// in the Key: a status write leaves the Prepared as good as it was. The Key
// means nothing for objects that do not come from the API server.
func (p *Prepared) Key() string { return p.key }

func keyOf(cluster string, pipelines []*v1alpha1.Pipeline, in Objects) string {
	var b strings.Builder
	b.WriteString(cluster)
	writeKeys(&b, kindPipeline, pipelines)
	writeKeys(&b, KindSubscription, pointers(in.Subscriptions))
	writeKeys(&b, KindOutput, pointers(in.Outputs))
	writeKeys(&b, KindInput, pointers(in.Inputs))
	writeKeys(&b, KindProcessor, pointers(in.Processors))
	return b.String()
}

// kindPipeline names Pipelines in keys; Pipelines select no Pipelines.
const kindPipeline Kind = "Pipeline"

// writeKeys writes one line per object of kind, sorted, so that the key does
// not depend on the order objects were listed in.
func writeKeys[P metav1.Object](b *strings.Builder, kind Kind, objects []P) {
	lines := make([]string, len(objects))
	for i, o := range objects {
		lines[i] = strings.Join([]string{string(kind), o.GetName(), string(o.GetUID()), strconv.FormatInt(o.GetGeneration(), 10),
			labelsLine(o.GetLabels())}, "/")
	}
	slices.Sort(lines)
	for _, l := range lines {
		b.WriteByte('\n')
		b.WriteString(l)
	}
}

// labelsLine spells labels in key order.
func labelsLine(labels map[string]string) string {
	keys := slices.Sorted(maps.Keys(labels))
	for i, k := range keys {
		keys[i] = strconv.Quote(k) + "=" + strconv.Quote(labels[k])
	}
	return strings.Join(keys, ",")
}

func pointers[T any, P interface {
	*T
	metav1.Object
}](items []T) []P {
	out := make([]P, len(items))
	for i := range items {
		out[i] = P(&items[i])
	}
	return out
}

// Selection assembles the Selection of the Cluster from targets, which yields
// every Target of the namespace once, each with its pick: Prepared.Target of
// that Target, or a pick of a Target of the same name and labels by the same
// Prepared (or one of the same Key). The Selection's targets point at the
// yielded Targets, whatever object a reused pick was made from; Selection
// keeps no pointer to a pick. Targets yielded in name order are not sorted
// again.
//
// The Selection's own slices and maps are new; those inside them (the
// subscriptions, outputs and labels of a target, the outputs and processors of
// an input, the output chains) are shared with the Prepared, its picks and
// its other Selections: they are read-only.
func (p *Prepared) Selection(targets iter.Seq2[*v1alpha1.Target, *TargetPick]) Selection {
	sel := p.sel
	sel.Pipelines = slices.Clone(p.sel.Pipelines)
	sel.Subscriptions = maps.Clone(p.sel.Subscriptions)
	sel.Outputs = maps.Clone(p.sel.Outputs)
	sel.Inputs = maps.Clone(p.sel.Inputs)
	sel.OutputProcessors = maps.Clone(p.sel.OutputProcessors)
	sel.Processors = maps.Clone(p.sel.Processors)
	problems := maps.Clone(p.problems)

	if n := p.selectedBefore.Load(); n > 0 {
		sel.Targets = make([]SelectedTarget, 0, n)
	}
	var referenced map[string]bool
	var lastProblems []string
	for t, pick := range targets {
		if pick.referenced {
			if referenced == nil {
				referenced = make(map[string]bool)
			}
			referenced[t.Name] = true
		}
		// Targets picked by the same pipelines share their problems: add them once.
		if len(pick.Problems) > 0 && (len(lastProblems) == 0 || &pick.Problems[0] != &lastProblems[0]) {
			for _, problem := range pick.Problems {
				problems[problem] = true
			}
			lastProblems = pick.Problems
		}
		if pick.Selected {
			st := pick.Target
			st.Target = t
			sel.Targets = append(sel.Targets, st)
		}
	}
	p.selectedBefore.Store(int64(len(sel.Targets)))
	if len(sel.Targets) == 0 {
		sel.Targets = nil // as when nothing was ever appended
	}
	byName := func(a, b SelectedTarget) int { return strings.Compare(a.Target.Name, b.Target.Name) }
	if !slices.IsSortedFunc(sel.Targets, byName) {
		slices.SortFunc(sel.Targets, byName)
	}
	for _, ref := range p.targetRefs {
		if !referenced[ref.name] {
			problems[ref.problem] = true
		}
	}
	sel.Problems = sortedSet(problems)
	return sel
}
