package selection

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// pool holds the objects of one kind that a pipeline can pick from.
type pool[T any] struct {
	kind   Kind
	names  []string // sorted, so that selectors match in a fixed order
	byName map[string]*T
	labels map[string]labels.Set
}

// newPool indexes items by name. The pointers point into items.
func newPool[T any, P interface {
	*T
	metav1.Object
}](kind Kind, items []T) pool[T] {
	p := pool[T]{kind: kind, byName: make(map[string]*T, len(items)), labels: make(map[string]labels.Set, len(items))}
	for i := range items {
		obj := P(&items[i])
		p.byName[obj.GetName()] = &items[i]
		p.labels[obj.GetName()] = labels.Set(obj.GetLabels())
	}
	p.names = sortedKeys(p.byName)
	return p
}

// pick returns the sorted, distinct names that pipeline selects with c, and a
// problem for each reference to a missing object and each invalid selector.
func (p pool[T]) pick(pipeline string, c choice) (names []string, problems []string) {
	for _, ref := range c.refs {
		if _, ok := p.byName[ref]; !ok {
			problems = append(problems, fmt.Sprintf("pipeline %q: %s %q not found", pipeline, p.kind.refField(), ref))
			continue
		}
		names = append(names, ref)
	}
	selectors, invalid := compileSelectors(pipeline, p.kind.selectorField(), c.selectors)
	problems = append(problems, invalid...)
	for _, sel := range selectors {
		for _, name := range p.names {
			if sel.Matches(p.labels[name]) {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names), problems
}

// compileSelectors returns the valid selectors of pipeline's field, in order,
// and a problem for each invalid one.
func compileSelectors(pipeline, field string, selectors []metav1.LabelSelector) (valid []labels.Selector, problems []string) {
	for i := range selectors {
		sel, err := metav1.LabelSelectorAsSelector(&selectors[i])
		if err != nil {
			problems = append(problems, fmt.Sprintf("pipeline %q: %s[%d] is invalid: %v", pipeline, field, i, err))
			continue
		}
		valid = append(valid, sel)
	}
	return valid, problems
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
