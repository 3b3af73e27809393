package fleetmemo

import (
	"iter"
	"maps"
	"slices"
	"strings"
	"unsafe"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/clusterplacement"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/internal/selection"
)

// pickEntry is one Target's selection with what it was computed from: its name (the map key), UID and labels.
// labels is the listed Target's own map, not a copy: the cache's objects are never changed in place (the
// controllers suite's tripwire fails any code that does), so the same map means the same labels, and a
// reconcile that lists the Targets without deep copies tells an unchanged Target by one pointer comparison.
type pickEntry struct {
	name   string
	uid    types.UID
	labels map[string]string
	// rv and profile are the listed Target's resourceVersion and profile.
	rv, profile string
	pick        selection.TargetPick
	// target is the Target as listed by the current pass.
	target *v1alpha1.Target
	seen   uint64
	// recorded is where the Target's status says it is for the Cluster, read from states (the status' own
	// map, as labels); hasRecorded tells whether it was read, and is in the Memo's recorded maps.
	states      map[string]v1alpha1.TargetClusterState
	recorded    clusterplacement.RecordedPods
	hasRecorded bool
	// checked is what the status pass last found the Target's status right for (Listed.NoteChecked).
	checked statusCheck
}

// Select is selection.Resolve(cluster, in), picking again only the Targets whose labels changed (and every
// Target when something else the selection reads changed: selection.Prepared.Key). The Selection is new; the
// slices and maps inside it are shared and read-only (Prepared.Selection).
//
// targetsUnchanged tells that in.Targets is the very list the last Select was given, and that the Targets it
// lists did not change since (the caller counts their changes): then, with the same Prepared key, the last
// Selection is given again, and Render, Recorded and Profiles skip their passes over the Targets too.
func (m *Memo) Select(cluster string, in selection.Objects, targetsUnchanged bool) selection.Selection {
	m.init()
	prepared := selection.Prepare(cluster, in)
	if targetsUnchanged && m.hasSelection && m.prepared != nil && m.prepared.Key() == prepared.Key() {
		m.selectionKept = true
		return m.selection
	}
	// A new Selection is rendered anew (whether or not a Render follows this Select).
	previous, hadPrevious, previousPass := m.selection, m.hasSelection, m.selectPass
	m.selectionKept, m.hasSelection, m.assembled = false, false, assembly{}
	m.selectPass++
	clear(m.moved[:cap(m.moved)]) // no Target of an earlier Select is kept alive
	m.patched, m.moved = false, m.moved[:0]
	if m.prepared == nil || m.prepared.Key() != prepared.Key() {
		for name, e := range m.picks {
			m.forgetRecorded(name, e)
		}
		m.prepared, m.picks, m.order, m.listed = prepared, map[string]*pickEntry{}, nil, nil
		m.unchecked = map[*pickEntry]struct{}{}
		m.selectEpoch++
		clear(m.memberVersions)
		hadPrevious = false
	}
	p := m.prepared
	reordered, picked := false, false
	// A Target is first looked for where the last list had it (a list brought up to date keeps its order): every
	// entry of listed is one of picks, under its name.
	listed := slices.Grow(m.listed[:0], len(in.Targets))[:len(in.Targets)]
	for i := range in.Targets {
		t := &in.Targets[i]
		e := listed[i]
		if e == nil || e.name != t.Name {
			e = m.picks[t.Name]
		}
		if e == nil || e.uid != t.UID || !sameLabels(e.labels, t.Labels) {
			pick := p.Target(t)
			switch {
			case e != nil && e.uid == t.UID && pick.Same(e.pick):
				// Relabelled, and picked by the same Pipelines as before: nothing the Selection holds changes.
				e.labels = t.Labels
			case e == nil:
				picked, reordered = true, true
				e = &pickEntry{name: t.Name, uid: t.UID, labels: t.Labels, pick: pick}
				m.picks[t.Name] = e
				m.record(pick.Pipelines)
			default:
				picked = true
				m.unrecord(e.pick.Pipelines)
				e.uid, e.labels, e.pick, e.checked = t.UID, t.Labels, pick, statusCheck{}
				m.record(pick.Pipelines)
			}
		}
		if e.target != t || e.rv != t.ResourceVersion { // another object, or one written over in place
			m.moved = append(m.moved, movedTarget{e: e, profileBefore: e.profile})
			// The same labels may come in another map (the Target was written since): keep the listed one, so
			// that the next pass finds the same map.
			e.target, e.rv, e.profile, e.labels = t, t.ResourceVersion, t.Spec.Profile, t.Labels
		}
		e.seen = m.selectPass
		if listed[i] != e {
			listed[i] = e
		}
	}
	clear(listed[len(in.Targets):cap(listed)]) // nothing beyond the list is kept alive
	m.listed = listed
	// Names are unique in a list: as many entries as listed Targets, none of them new, are the listed ones.
	if reordered || len(m.picks) != len(in.Targets) {
		for name, e := range m.picks {
			if e.seen != m.selectPass {
				m.unrecord(e.pick.Pipelines)
				m.forgetRecorded(name, e)
				delete(m.picks, name)
				delete(m.unchecked, e)
				reordered = true
			}
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
	if hadPrevious && !reordered && !picked && m.patchSelection(previous) {
		m.patched, m.patchedFrom = true, previousPass
		m.hasSelection = true
		return m.selection
	}
	m.selection = p.Selection(func(yield func(*v1alpha1.Target, *selection.TargetPick) bool) {
		for _, name := range m.order {
			e := m.picks[name]
			if !yield(e.target, &e.pick) {
				return
			}
		}
	})
	m.hasSelection, m.profileNames = true, nil
	return m.selection
}

// movedTarget is an entry whose Target is another object than the last Select's, or the same one written over
// with another resourceVersion (a list brought up to date in place), and the profile it named before.
type movedTarget struct {
	e             *pickEntry
	profileBefore string
}

// patchSelection makes the Selection from the previous one when the same Targets are listed with the same picks
// and only some of them are other objects (m.moved): the selected ones among those take their place in a copy of
// its Targets, everything else is shared. It is what Prepared.Selection would make: a pick is all it takes from
// a Target besides the object. It records, in m.movedSelected, where the selected ones are. It is false, and
// nothing is made, when a moved Target is selected and not in the previous Selection (never, with the same
// picks).
func (m *Memo) patchSelection(previous selection.Selection) bool {
	m.movedSelected = m.movedSelected[:0]
	profilesKept := m.profileNames != nil
	var targets []selection.SelectedTarget
	for _, mv := range m.moved {
		if !mv.e.pick.Selected {
			continue
		}
		i, found := slices.BinarySearchFunc(previous.Targets, mv.e.name, func(st selection.SelectedTarget, name string) int {
			return strings.Compare(st.Target.Name, name)
		})
		if !found {
			return false
		}
		if previous.Targets[i].Target != mv.e.target { // not the same object written over in place
			if targets == nil {
				targets = slices.Clone(previous.Targets)
			}
			targets[i].Target = mv.e.target
		}
		m.movedSelected = append(m.movedSelected, i)
		profilesKept = profilesKept && mv.profileBefore == mv.e.profile
	}
	if targets != nil {
		previous.Targets = targets
	}
	m.selection = previous
	if !profilesKept {
		m.profileNames = nil
	}
	return true
}

// Profiles is selection.ProfilesOf(the last Select's Selection), made once per Selection.
func (m *Memo) Profiles() []string {
	if m.profileNames == nil {
		m.profileNames = selection.ProfilesOf(m.selection)
		if m.profileNames == nil {
			m.profileNames = []string{}
		}
	}
	return m.profileNames
}

// Recorded is clusterplacement.Recorded(c, the last Select's Selection): where the selected Targets' statuses
// say each is, kept between reconciles and read again only from the statuses that changed. The maps belong to
// the Memo and change in place; version moves whenever they do.
func (m *Memo) Recorded(c *v1alpha1.Cluster) (current, last map[string]int, version uint64) {
	key := recordedKey(c)
	if m.selectionKept && key == m.recordedFor {
		return m.current, m.last, m.recordedVersion // no status changed
	}
	recordedBefore := m.recordedPass
	m.recordedPass = m.selectPass
	if m.patched && recordedBefore == m.patchedFrom && key == m.recordedFor {
		// The same picks as the Selection the last call read: only the Targets that are other objects now.
		for _, mv := range m.moved {
			m.readRecorded(c, mv.e)
		}
		return m.current, m.last, m.recordedVersion
	}
	if key != m.recordedFor {
		// Pod names read otherwise now: read every status again.
		m.recordedFor = key
		for name, e := range m.picks {
			m.forgetRecorded(name, e)
		}
	}
	for _, e := range m.picks {
		m.readRecorded(c, e)
	}
	return m.current, m.last, m.recordedVersion
}

// readRecorded brings the recorded maps up to date with where the Target's status says it is, if it is selected.
func (m *Memo) readRecorded(c *v1alpha1.Cluster, e *pickEntry) {
	if !e.pick.Selected {
		m.forgetRecorded(e.name, e)
		return
	}
	states := e.target.Status.ClusterStates
	if e.hasRecorded && sameMap(states, e.states) {
		return
	}
	r := clusterplacement.RecordedOf(c, e.target)
	if e.hasRecorded && r == e.recorded {
		e.states = states
		return
	}
	m.forgetRecorded(e.name, e)
	e.states, e.recorded, e.hasRecorded = states, r, true
	if r.HasCurrent {
		m.current[e.name] = r.Current
	}
	if r.HasLast {
		m.last[e.name] = r.Last
	}
	m.recordedVersion++
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

// Targets yields every Target the last Select was given, in no order.
func (m *Memo) Targets() iter.Seq[Listed] {
	return func(yield func(Listed) bool) {
		for _, e := range m.picks {
			if !yield(Listed{e, m}) {
				return
			}
		}
	}
}

// TargetsToCheck yields, in no order, the Targets the last Select was given whose status a status pass under
// this placement version and these collector reads must look at: those whose Checked is false. The Targets
// found right stay found right until a later pass finds otherwise, so a pass that follows one for the same
// placement, over the same Selection or the one the last Select patched (patchSelection: no pick changed),
// looks only at the Targets not found right then and not noted since (NoteChecked), those forgotten since
// (ForgetChecked), those the last Select found written if no pass followed it yet, and those on the pods whose
// collector was read again since (onPod gives a pod's targets under this placement: every Target whose status
// key names the pod is among them); any other pass looks at every Target. remember false (a pass that notes nothing) yields every Target.
func (m *Memo) TargetsToCheck(placement uint64, reads map[int]CollectorRead, remember bool, onPod func(ordinal int) []string) iter.Seq[Listed] {
	last := m.checkedAt
	m.checkedAt = checkPoint{valid: remember, placement: placement, reads: maps.Clone(reads), selectPass: m.selectPass}
	if !remember {
		clear(m.unchecked)
		return m.Targets()
	}
	m.toCheck = m.toCheck[:0]
	check := func(e *pickEntry) {
		if (Listed{e, m}).Checked(placement, reads) {
			delete(m.unchecked, e)
			return
		}
		m.unchecked[e] = struct{}{}
		m.toCheck = append(m.toCheck, e)
	}
	var reread []int
	if last.valid {
		for ordinal, read := range reads {
			if was, ok := last.reads[ordinal]; !ok || was != read {
				reread = append(reread, ordinal)
			}
		}
		for ordinal := range last.reads {
			if _, ok := reads[ordinal]; !ok {
				reread = append(reread, ordinal)
			}
		}
	}
	if last.valid && last.placement == placement && len(reread) <= max(1, len(reads)/4) &&
		(last.selectPass == m.selectPass || (m.patched && m.patchedFrom == last.selectPass)) {
		candidates := make(map[*pickEntry]struct{}, len(m.unchecked)+len(m.moved))
		for e := range m.unchecked {
			candidates[e] = struct{}{}
		}
		if last.selectPass != m.selectPass { // the Targets this Select found written have not been looked at yet
			for _, mv := range m.moved {
				if m.picks[mv.e.name] == mv.e {
					candidates[mv.e] = struct{}{}
				}
			}
		}
		for _, ordinal := range reread {
			for _, name := range onPod(ordinal) {
				if e, ok := m.picks[name]; ok {
					candidates[e] = struct{}{}
				}
			}
		}
		for e := range candidates {
			check(e)
		}
	} else {
		clear(m.unchecked)
		for _, e := range m.picks {
			check(e)
		}
	}
	return func(yield func(Listed) bool) {
		for _, e := range m.toCheck {
			if !yield(Listed{e, m}) {
				return
			}
		}
	}
}

// checkPoint is what the last TargetsToCheck was asked for, and after which Select.
type checkPoint struct {
	valid      bool
	placement  uint64
	reads      map[int]CollectorRead
	selectPass uint64
}

// Lists tells whether the last Select was given this Target (by name and UID).
func (m *Memo) Lists(name string, uid types.UID) bool {
	e, ok := m.picks[name]
	return ok && e.uid == uid
}

// Listed is one Target the last Select was given, with what the status pass last found of its status.
type Listed struct {
	e *pickEntry
	m *Memo
}

// Target is the Target as listed (the cache's own object: read it only).
func (l Listed) Target() *v1alpha1.Target { return l.e.target }

// Selected tells whether the last Select selected it.
func (l Listed) Selected() bool { return l.e.pick.Selected }

// StatusKey identifies what a selected Target's status entry is worked out from besides the Target's name: the
// placement (a version the caller moves whenever it places anew), the pod it puts the Target on (-1: none), and
// the last read of that pod's collector (CollectorRead). The zero StatusKey stands for a Target the Cluster does
// not select.
type StatusKey struct {
	placement uint64
	pod       int
	read      CollectorRead
}

// NewStatusKey is the StatusKey of a Target placed by placement version placement on pod, whose collector was
// last read as read.
func NewStatusKey(placement uint64, pod int, read CollectorRead) StatusKey {
	return StatusKey{placement: placement, pod: pod, read: read}
}

// CollectorRead identifies one read of a collector: the map of target states it gave, which is never changed
// once read, and whether the collector could be read.
type CollectorRead struct {
	known  bool
	states unsafe.Pointer
}

// ReadOf is the CollectorRead of a read that gave these target states.
func ReadOf(known bool, states map[string]gnmic.TargetStatus) CollectorRead {
	return CollectorRead{known: known, states: mapPointer(states)}
}

// statusCheck is a status found right: for which key, with the Target selected or not, in which status map.
type statusCheck struct {
	key      StatusKey
	selected bool
	states   map[string]v1alpha1.TargetClusterState
	valid    bool
}

// Checked tells whether the Target's status was found right (NoteChecked) with the Target selected as it is now,
// in the status map it has now, and, selected, under this placement version with its pod's collector read as
// reads has it now: then it is right still, for the entry is worked out from these alone.
func (l Listed) Checked(placement uint64, reads map[int]CollectorRead) bool {
	c := &l.e.checked
	if !c.valid || c.selected != l.e.pick.Selected || !sameMap(c.states, l.e.target.Status.ClusterStates) {
		return false
	}
	return !c.selected || (c.key.placement == placement && reads[c.key.pod] == c.key.read)
}

// NoteChecked records that the Target's status, as listed, is right for this key.
func (l Listed) NoteChecked(key StatusKey) {
	l.e.checked = statusCheck{key: key, selected: l.e.pick.Selected, states: l.e.target.Status.ClusterStates, valid: true}
	delete(l.m.unchecked, l.e)
}

// ForgetChecked drops what NoteChecked recorded.
func (l Listed) ForgetChecked() {
	l.e.checked = statusCheck{}
	l.m.unchecked[l.e] = struct{}{}
}

// sameLabels tells whether two label sets are equal: at once when they are the same map.
func sameLabels(a, b map[string]string) bool {
	return sameMap(a, b) || maps.Equal(a, b)
}

// sameMap tells whether a and b are the same map (a map value is a pointer to the runtime's map).
func sameMap[K comparable, V any](a, b map[K]V) bool {
	return mapPointer(a) == mapPointer(b)
}

// mapPointer is the runtime's map behind m (a map value is a pointer to it): its identity.
func mapPointer[K comparable, V any](m map[K]V) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&m))
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
