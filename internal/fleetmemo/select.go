package fleetmemo

import (
	"iter"
	"maps"
	"slices"
	"unsafe"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/clusterplacement"
	"github.com/gnmic-operator/gnmic-operator/internal/selection"
)

// pickEntry is one Target's selection with what it was computed from: its name (the map key), UID and labels.
// labels is the listed Target's own map, not a copy: the cache's objects are never changed in place (the
// controllers suite's tripwire fails any code that does), so the same map means the same labels, and a
// reconcile that lists the Targets without deep copies tells an unchanged Target by one pointer comparison.
type pickEntry struct {
	uid    types.UID
	labels map[string]string
	pick   selection.TargetPick
	// target is the Target as listed by the current pass.
	target *v1alpha1.Target
	seen   uint64
	// recorded is where the Target's status says it is for the Cluster, read from states (the status' own
	// map, as labels); hasRecorded tells whether it was read, and is in the Memo's recorded maps.
	states      map[string]v1alpha1.TargetClusterState
	recorded    clusterplacement.RecordedPods
	hasRecorded bool
}

// Select is selection.Resolve(cluster, in), picking again only the Targets whose labels changed (and every
// Target when something else the selection reads changed: selection.Prepared.Key). The Selection is new; the
// slices and maps inside it are shared and read-only (Prepared.Selection).
func (m *Memo) Select(cluster string, in selection.Objects) selection.Selection {
	m.init()
	m.selectPass++
	prepared := selection.Prepare(cluster, in)
	if m.prepared == nil || m.prepared.Key() != prepared.Key() {
		for name, e := range m.picks {
			m.forgetRecorded(name, e)
		}
		m.prepared, m.picks, m.order = prepared, map[string]*pickEntry{}, nil
		m.selectEpoch++
		clear(m.memberVersions)
	}
	p := m.prepared
	reordered := false
	for i := range in.Targets {
		t := &in.Targets[i]
		e := m.picks[t.Name]
		if e == nil || e.uid != t.UID || !sameLabels(e.labels, t.Labels) {
			pick := p.Target(t)
			if e == nil {
				reordered = true
				e = &pickEntry{}
				m.picks[t.Name] = e
			} else {
				m.unrecord(e.pick.Pipelines)
			}
			e.uid, e.labels, e.pick = t.UID, t.Labels, pick
			m.record(pick.Pipelines)
		}
		// The same labels may come in another map (the Target was written since): keep the listed one, so that
		// the next pass finds the same map.
		e.target, e.seen, e.labels = t, m.selectPass, t.Labels
	}
	for name, e := range m.picks {
		if e.seen != m.selectPass {
			m.unrecord(e.pick.Pipelines)
			m.forgetRecorded(name, e)
			delete(m.picks, name)
			reordered = true
		}
	}
	if reordered || m.order == nil {
		m.order = slices.Sorted(maps.Keys(m.picks))
	}
	for name := range m.owns {
		if !slices.ContainsFunc(in.Pipelines, func(p v1alpha1.Pipeline) bool { return p.Name == name }) {
			delete(m.owns, name)
		}
	}
	return p.Selection(func(yield func(*v1alpha1.Target, *selection.TargetPick) bool) {
		for _, name := range m.order {
			e := m.picks[name]
			if !yield(e.target, &e.pick) {
				return
			}
		}
	})
}

// Recorded is clusterplacement.Recorded(c, the last Select's Selection): where the selected Targets' statuses
// say each is, kept between reconciles and read again only from the statuses that changed. The maps belong to
// the Memo and change in place; version moves whenever they do.
func (m *Memo) Recorded(c *v1alpha1.Cluster) (current, last map[string]int, version uint64) {
	if key := recordedKey(c); key != m.recordedFor {
		// Pod names read otherwise now: read every status again.
		m.recordedFor = key
		for name, e := range m.picks {
			m.forgetRecorded(name, e)
		}
	}
	for name, e := range m.picks {
		if !e.pick.Selected {
			m.forgetRecorded(name, e)
			continue
		}
		states := e.target.Status.ClusterStates
		if e.hasRecorded && sameMap(states, e.states) {
			continue
		}
		r := clusterplacement.RecordedOf(c, e.target)
		if e.hasRecorded && r == e.recorded {
			e.states = states
			continue
		}
		m.forgetRecorded(name, e)
		e.states, e.recorded, e.hasRecorded = states, r, true
		if r.HasCurrent {
			m.current[name] = r.Current
		}
		if r.HasLast {
			m.last[name] = r.Last
		}
		m.recordedVersion++
	}
	return m.current, m.last, m.recordedVersion
}

// forgetRecorded takes a Target out of the recorded maps.
func (m *Memo) forgetRecorded(name string, e *pickEntry) {
	if !e.hasRecorded {
		return
	}
	e.hasRecorded, e.states = false, nil
	delete(m.current, name)
	delete(m.last, name)
	m.recordedVersion++
}

// recordedKey is what reading a pod name as an ordinal depends on: the Cluster's name and domains.
func recordedKey(c *v1alpha1.Cluster) string {
	key := c.Name
	for _, d := range c.Spec.Domains {
		key += "\x00" + d.Name
	}
	return key
}

// Targets yields every Target the last Select was given, with whether it selected it, in no order.
func (m *Memo) Targets() iter.Seq2[*v1alpha1.Target, bool] {
	return func(yield func(*v1alpha1.Target, bool) bool) {
		for _, e := range m.picks {
			if !yield(e.target, e.pick.Selected) {
				return
			}
		}
	}
}

// sameLabels tells whether two label sets are equal: at once when they are the same map.
func sameLabels(a, b map[string]string) bool {
	return sameMap(a, b) || maps.Equal(a, b)
}

// sameMap tells whether a and b are the same map (a map value is a pointer to the runtime's map).
func sameMap[K comparable, V any](a, b map[K]V) bool {
	return *(*unsafe.Pointer)(unsafe.Pointer(&a)) == *(*unsafe.Pointer)(unsafe.Pointer(&b))
}

// record and unrecord move the version of each Pipeline whose Targets' picks are made again: its own
// selection (Own) is then made again too.
func (m *Memo) record(pipelines []string) {
	for _, p := range pipelines {
		m.memberVersions[p]++
	}
}

func (m *Memo) unrecord(pipelines []string) { m.record(pipelines) }

// PipelineKey identifies what a Pipeline's own selection (selection.Resolve of the Cluster with that Pipeline
// alone) is made of, as of the last Select: everything but Targets, and the Targets it picks.
type PipelineKey struct {
	epoch      uint64
	pipeline   types.UID
	generation int64
	members    uint64
}

// Own is the summary of make(), the Pipeline's own selection (selection.Resolve of the Cluster's objects with
// that Pipeline alone), remembered while the Prepared of the last Select, the Pipeline's generation and the
// picks of the Targets it picks are the same. Call it after Select.
func (m *Memo) Own(p *v1alpha1.Pipeline, make func() selection.Selection) selection.Summary {
	m.init()
	key := PipelineKey{epoch: m.selectEpoch, pipeline: p.UID, generation: p.Generation, members: m.memberVersions[p.Name]}
	if e, ok := m.owns[p.Name]; ok && e.key == key {
		return e.own
	}
	own := make().Summary()
	m.owns[p.Name] = ownEntry{key: key, own: own}
	return own
}

type ownEntry struct {
	key PipelineKey
	own selection.Summary
}
