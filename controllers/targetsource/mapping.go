package targetsource

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/targetmapping"
)

// mappings keeps each TargetSource's compiled mapping (or why it does not compile) for the generation it was
// compiled at: a mapping is compiled once per generation, not once per sync. Forgetting rule: an entry goes
// with the TargetSource's provider (providers.forget calls forget).
type mappings struct {
	mu      sync.Mutex
	entries map[types.NamespacedName]compiledMapping
}

type compiledMapping struct {
	uid        types.UID
	generation int64
	mapper     *targetmapping.Mapper
	err        error
}

// of is the TargetSource's mapping, compiled now if its generation has not been.
func (m *mappings) of(ts *operatorv1alpha1.TargetSource) (*targetmapping.Mapper, error) {
	key := types.NamespacedName{Namespace: ts.Namespace, Name: ts.Name}
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.entries[key]; ok && c.uid == ts.UID && c.generation == ts.Generation {
		return c.mapper, c.err
	}
	mapper, err := targetmapping.Compile(mappingOf(&ts.Spec.Mapping))
	if m.entries == nil {
		m.entries = map[types.NamespacedName]compiledMapping{}
	}
	m.entries[key] = compiledMapping{uid: ts.UID, generation: ts.Generation, mapper: mapper, err: err}
	return mapper, err
}

func (m *mappings) forget(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.entries, key)
}

// mappingOf is the mapping core's view of spec.mapping.
func mappingOf(m *operatorv1alpha1.TargetMapping) targetmapping.Mapping {
	return targetmapping.Mapping{
		Preset: m.Preset,
		Expressions: targetmapping.Expressions{Expand: m.Expand, Include: m.Include, Name: m.Name, Address: m.Address,
			Profile: m.Profile, Labels: m.Labels, Tags: m.Tags},
		DefaultProfile:  m.Defaults.Profile,
		AllowedProfiles: m.AllowedProfiles,
		DefaultPort:     int(m.Defaults.Port),
		DefaultLabels:   m.Defaults.Labels,
	}
}
