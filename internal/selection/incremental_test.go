package selection

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// This file checks the promise of Prepared: a caller that keeps its Prepared
// while the Key is unchanged, and each Target's pick while the Target's name
// and labels are unchanged, gets the Selection Resolve returns, after any
// sequence of changes to the namespace; and Resolve returns what it returned
// before it was split (reference_resolve_test.go).

// incrementalCaller selects as a Cluster reconciler that remembers picks does.
// A faulty caller (one of the reuse rules below broken) proves that the
// comparison catches what the rules protect against.
type incrementalCaller struct {
	prepared *Prepared
	picks    map[string]*keptPick

	ignoreKey, ignoreLabels bool // faults, for the test of the test

	keptPrepared, reusedPicks, newPicks int
	problems                            map[string]int // how many Selections had a problem of each kind
}

type keptPick struct {
	labels map[string]string
	pick   TargetPick
}

func (c *incrementalCaller) selection(cluster string, in Objects) Selection {
	p := Prepare(cluster, in)
	if c.prepared != nil && (c.ignoreKey || p.Key() == c.prepared.Key()) {
		c.keptPrepared++
	} else {
		c.prepared, c.picks = p, make(map[string]*keptPick)
	}
	picks := make([]*TargetPick, len(in.Targets))
	for i := range in.Targets {
		t := &in.Targets[i]
		k, ok := c.picks[t.Name]
		if ok && (c.ignoreLabels || maps.Equal(k.labels, t.Labels)) {
			c.reusedPicks++
		} else {
			k = &keptPick{labels: t.Labels, pick: c.prepared.Target(t)}
			c.picks[t.Name] = k
			c.newPicks++
		}
		picks[i] = &k.pick
	}
	// The pick of a Target that went is not wrong, only useless: forget such
	// picks when there are more picks than Targets.
	if len(c.picks) > len(in.Targets) {
		listed := make(map[string]bool, len(in.Targets))
		for i := range in.Targets {
			listed[in.Targets[i].Name] = true
		}
		maps.DeleteFunc(c.picks, func(name string, _ *keptPick) bool { return !listed[name] })
	}
	sel := c.prepared.Selection(func(yield func(*v1alpha1.Target, *TargetPick) bool) {
		for i := range in.Targets {
			if !yield(&in.Targets[i], picks[i]) {
				return
			}
		}
	})
	for _, kind := range targetProblems {
		if slices.ContainsFunc(sel.Problems, func(p string) bool { return strings.Contains(p, kind) }) {
			if c.problems == nil {
				c.problems = make(map[string]int)
			}
			c.problems[kind]++
		}
	}
	return sel
}

// targetProblems tell apart the problems that depend on Targets.
var targetProblems = []string{"set label", "selects targets but no subscription", "targetRef", "targetSelectors"}

// namespaceModel is a namespace that changes as an API server changes it:
// every change of an object bumps its resourceVersion, every new object gets
// a new UID. Objects are replaced, never modified, so that an Objects listed
// earlier keeps its content.
type namespaceModel struct {
	rng     *rand.Rand
	version int
	objects Objects
}

func (m *namespaceModel) stamp(meta *metav1.ObjectMeta, created bool) {
	m.version++
	meta.ResourceVersion = strconv.Itoa(m.version)
	meta.Generation = int64(m.version)
	if created {
		meta.UID = types.UID("uid-" + meta.ResourceVersion)
	}
}

// list returns the namespace as a reconciler lists it: new slices, in an order
// that is sometimes by name and sometimes not.
func (m *namespaceModel) list() Objects {
	in := Objects{
		Pipelines:     slices.Clone(m.objects.Pipelines),
		Targets:       slices.Clone(m.objects.Targets),
		Subscriptions: slices.Clone(m.objects.Subscriptions),
		Outputs:       slices.Clone(m.objects.Outputs),
		Inputs:        slices.Clone(m.objects.Inputs),
		Processors:    slices.Clone(m.objects.Processors),
	}
	if m.rng.IntN(2) == 0 {
		slices.SortFunc(in.Targets, func(a, b v1alpha1.Target) int { return strings.Compare(a.Name, b.Name) })
	} else {
		m.rng.Shuffle(len(in.Targets), func(i, j int) { in.Targets[i], in.Targets[j] = in.Targets[j], in.Targets[i] })
	}
	m.rng.Shuffle(len(in.Pipelines), func(i, j int) { in.Pipelines[i], in.Pipelines[j] = in.Pipelines[j], in.Pipelines[i] })
	return in
}

func (m *namespaceModel) name(prefix string, n int) string {
	return fmt.Sprintf("%s%d", prefix, m.rng.IntN(n))
}

// oneOf returns one of values.
func oneOf[T any](rng *rand.Rand, values ...T) T { return values[rng.IntN(len(values))] }

// someLabels returns a random subset of keys, each with one of its values; nil
// when the subset is empty.
func (m *namespaceModel) someLabels(keys map[string][]string) map[string]string {
	var out map[string]string
	for _, key := range sortedKeys(keys) {
		if m.rng.IntN(2) == 0 {
			if out == nil {
				out = map[string]string{}
			}
			out[key] = oneOf(m.rng, keys[key]...)
		}
	}
	return out
}

var (
	targetLabels       = map[string][]string{"dc": {"dc1", "dc2", "dc3"}, "role": {"edge", "core"}}
	subscriptionLabels = map[string][]string{"kind": {"stats", "state"}}
	outputLabels       = map[string][]string{"tier": {"hot", "cold"}}
	inputLabels        = map[string][]string{"from": {"edge", "core"}}
	processorLabels    = map[string][]string{"stage": {"a", "b"}}
	pipelineLabels     = map[string][]string{"env": {"prod", "test"}, "site": {"par", "ams"}}
)

// selectors returns up to max selectors over keys: by labels, by expression,
// empty (everything) or invalid.
func (m *namespaceModel) selectors(keys map[string][]string, max int) []metav1.LabelSelector {
	var out []metav1.LabelSelector
	for range m.rng.IntN(max + 1) {
		key := oneOf(m.rng, sortedKeys(keys)...)
		switch m.rng.IntN(6) {
		case 0:
			out = append(out, metav1.LabelSelector{})
		case 1:
			out = append(out, metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: key, Operator: "Near", Values: keys[key]}}})
		case 2:
			out = append(out, metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: key, Operator: oneOf(m.rng, metav1.LabelSelectorOpNotIn, metav1.LabelSelectorOpIn), Values: []string{oneOf(m.rng, keys[key]...)}},
			}})
		case 3:
			out = append(out, metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: key, Operator: oneOf(m.rng, metav1.LabelSelectorOpExists, metav1.LabelSelectorOpDoesNotExist)},
			}})
		default:
			out = append(out, metav1.LabelSelector{MatchLabels: m.someLabels(keys)})
		}
	}
	return out
}

func (m *namespaceModel) refs(prefix string, n, max int) []string {
	var out []string
	for range m.rng.IntN(max + 1) {
		out = append(out, m.name(prefix, n))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// pipelineSpec returns a random spec; refs may name missing objects (names
// go beyond those the model creates).
func (m *namespaceModel) pipelineSpec() v1alpha1.PipelineSpec {
	spec := v1alpha1.PipelineSpec{
		ClusterRef:            oneOf(m.rng, "c1", "c1", "c1", "c2"),
		Enabled:               oneOf(m.rng, nil, ptr(true), ptr(false)),
		TargetRefs:            m.refs("t", 44, 3),
		TargetSelectors:       m.selectors(targetLabels, 2),
		SubscriptionRefs:      m.refs("s", 7, 2),
		SubscriptionSelectors: m.selectors(subscriptionLabels, 1),
		Labels:                m.someLabels(pipelineLabels),
	}
	if m.rng.IntN(3) > 0 {
		spec.Outputs = &v1alpha1.OutputSelection{
			OutputRefs: m.refs("o", 6, 2), OutputSelectors: m.selectors(outputLabels, 1),
			ProcessorRefs: m.refs("x", 6, 2), ProcessorSelectors: m.selectors(processorLabels, 1),
		}
	}
	if m.rng.IntN(3) == 0 {
		spec.Inputs = &v1alpha1.InputSelection{InputRefs: m.refs("i", 4, 2), InputSelectors: m.selectors(inputLabels, 1), ProcessorRefs: m.refs("x", 6, 1)}
	}
	return spec
}

// editPipeline changes one part of a pipeline's spec.
func (m *namespaceModel) editPipeline(p *v1alpha1.Pipeline) {
	fresh := m.pipelineSpec()
	switch m.rng.IntN(8) {
	case 0:
		p.Spec.ClusterRef = fresh.ClusterRef
	case 1:
		p.Spec.Enabled = fresh.Enabled
	case 2:
		p.Spec.TargetRefs = fresh.TargetRefs
	case 3:
		p.Spec.TargetSelectors = fresh.TargetSelectors
	case 4:
		p.Spec.SubscriptionRefs, p.Spec.SubscriptionSelectors = fresh.SubscriptionRefs, fresh.SubscriptionSelectors
	case 5:
		p.Spec.Outputs = fresh.Outputs
	case 6:
		p.Spec.Inputs = fresh.Inputs
	default:
		p.Spec.Labels = fresh.Labels
	}
}

func (m *namespaceModel) newTarget(name string) v1alpha1.Target {
	t := target(name, m.someLabels(targetLabels))
	m.stamp(&t.ObjectMeta, true)
	return t
}

func (m *namespaceModel) newProcessor(name string) v1alpha1.Processor {
	p := v1alpha1.Processor{ObjectMeta: meta(name, m.someLabels(processorLabels)), Spec: v1alpha1.ProcessorSpec{Type: "event-drop"}}
	if m.rng.IntN(4) == 0 {
		p.Spec.Type = "event-combine"
		p.Spec.Config = map[string]apiextensionsv1.JSON{"processors": {Raw: fmt.Appendf(nil, `[{"name":%q}]`, m.name("x", 6))}}
	}
	m.stamp(&p.ObjectMeta, true)
	return p
}

// change applies one random change to the namespace.
func (m *namespaceModel) change() {
	switch m.rng.IntN(10) {
	case 0, 1, 2, 3, 4, 5:
		changeItems(m, &m.objects.Targets, "t", 40, m.newTarget, func(t *v1alpha1.Target) {
			if m.rng.IntN(3) == 0 {
				t.Spec.Address = fmt.Sprintf("10.0.0.%d:57400", m.rng.IntN(255)) // the labels stay: the pick too
				return
			}
			t.Labels = m.someLabels(targetLabels)
		})
	case 6:
		changeItems(m, &m.objects.Pipelines, "p", 8, func(name string) v1alpha1.Pipeline {
			p := v1alpha1.Pipeline{ObjectMeta: meta(name, nil), Spec: m.pipelineSpec()}
			m.stamp(&p.ObjectMeta, true)
			return p
		}, m.editPipeline)
	case 7:
		changeItems(m, &m.objects.Subscriptions, "s", 6, func(name string) v1alpha1.Subscription {
			s := subscription(name, m.someLabels(subscriptionLabels))
			m.stamp(&s.ObjectMeta, true)
			return s
		}, func(s *v1alpha1.Subscription) { s.Labels = m.someLabels(subscriptionLabels) })
	case 8:
		if m.rng.IntN(2) == 0 {
			changeItems(m, &m.objects.Outputs, "o", 5, func(name string) v1alpha1.Output {
				o := output(name, m.someLabels(outputLabels))
				o.Spec.EventProcessors = m.refs("x", 6, 1)
				m.stamp(&o.ObjectMeta, true)
				return o
			}, func(o *v1alpha1.Output) { o.Labels = m.someLabels(outputLabels) })
			return
		}
		changeItems(m, &m.objects.Inputs, "i", 3, func(name string) v1alpha1.Input {
			in := input(name, m.someLabels(inputLabels))
			m.stamp(&in.ObjectMeta, true)
			return in
		}, func(in *v1alpha1.Input) { in.Labels = m.someLabels(inputLabels) })
	default:
		changeItems(m, &m.objects.Processors, "x", 5, m.newProcessor, func(p *v1alpha1.Processor) { p.Labels = m.someLabels(processorLabels) })
	}
}

// changeItems adds an item named prefix0…prefix<n-1> if it does not exist
// yet, removes one, or edits one (a deep copy, with a new resourceVersion).
func changeItems[T any, P interface {
	*T
	metav1.Object
	DeepCopy() P
}](m *namespaceModel, items *[]T, prefix string, n int, create func(name string) T, edit func(P)) {
	switch r := m.rng.IntN(4); {
	case len(*items) == 0 || r < 2: // more adds than removes: about n/2 items
		name := m.name(prefix, n)
		if slices.ContainsFunc(*items, func(item T) bool { return P(&item).GetName() == name }) {
			return
		}
		*items = append(*items, create(name))
	case r == 2:
		i := m.rng.IntN(len(*items))
		*items = slices.Delete(*items, i, i+1)
	default:
		i := m.rng.IntN(len(*items))
		edited := P(&(*items)[i]).DeepCopy()
		edit(edited)
		m.version++
		edited.SetResourceVersion(strconv.Itoa(m.version))
		edited.SetGeneration(int64(m.version))
		(*items)[i] = *edited
	}
}

// compareWithResolve applies steps rounds of one to three random changes and
// reports the first round at which caller's Selection of a Cluster differs
// from Resolve's.
func compareWithResolve(seed1, seed2 uint64, steps int, caller *incrementalCaller) error {
	m := &namespaceModel{rng: rand.New(rand.NewPCG(seed1, seed2))}
	cluster := oneOf(m.rng, "c1", "c1", "c2")
	for range 60 {
		m.change()
	}
	for step := range steps {
		for range 1 + m.rng.IntN(3) {
			m.change()
		}
		in := m.list()
		got, want := caller.selection(cluster, in), Resolve(cluster, in)
		if before := referenceResolve(cluster, in); !reflect.DeepEqual(want, before) {
			return fmt.Errorf("step %d (cluster %s): Resolve differs from Resolve before the split:\n got %+v\nwant %+v", step, cluster, summarize(want), summarize(before))
		}
		if !reflect.DeepEqual(got, want) {
			return fmt.Errorf("step %d (cluster %s): the incremental selection differs from Resolve:\n got %+v\nwant %+v", step, cluster, summarize(got), summarize(want))
		}
	}
	return nil
}

func TestIncrementalSelectionEqualsResolve(t *testing.T) {
	caller := &incrementalCaller{}
	for seed := range uint64(40) {
		caller.prepared = nil // a new namespace
		if err := compareWithResolve(seed, 32, 60, caller); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
	// The comparison is only worth something if picks and Prepareds were kept,
	// and if the problems that depend on Targets happened.
	if caller.keptPrepared < 40*60/4 || caller.reusedPicks < (caller.reusedPicks+caller.newPicks)/4 {
		t.Fatalf("kept %d Prepared, reused %d picks and made %d: the sequences do not exercise reuse", caller.keptPrepared, caller.reusedPicks, caller.newPicks)
	}
	for _, kind := range targetProblems {
		if caller.problems[kind] < 10 {
			t.Fatalf("only %d selections had a problem with %q: the sequences do not exercise it", caller.problems[kind], kind)
		}
	}
	t.Logf("kept %d Prepared, reused %d picks, made %d; selections with problems: %v", caller.keptPrepared, caller.reusedPicks, caller.newPicks, caller.problems)
}

func TestIncrementalSelectionComparisonCatchesAFaultyCaller(t *testing.T) {
	for _, fault := range []struct {
		name   string
		caller incrementalCaller
	}{
		{"keeps its Prepared when the Key changes", incrementalCaller{ignoreKey: true}},
		{"reuses the pick of a relabelled Target", incrementalCaller{ignoreLabels: true}},
	} {
		t.Run(fault.name, func(t *testing.T) {
			for seed := range uint64(40) {
				caller := fault.caller
				if compareWithResolve(seed, 32, 60, &caller) != nil {
					return
				}
			}
			t.Fatal("no sequence told the faulty caller from Resolve")
		})
	}
}

func FuzzIncrementalSelection(f *testing.F) {
	f.Add(uint64(1), uint64(2), uint8(20))
	f.Add(uint64(7), uint64(0), uint8(200))
	f.Fuzz(func(t *testing.T, seed1, seed2 uint64, steps uint8) {
		if err := compareWithResolve(seed1, seed2, int(steps), &incrementalCaller{}); err != nil {
			t.Fatal(err)
		}
	})
}
