package fleetmemo

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"hash/maphash"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/changelog"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/internal/render"
	"github.com/gnmic-operator/gnmic-operator/internal/selection"
)

// Memo is what one Cluster's reconciles remember of the work each selected target costs: its rendered and
// validated configuration, and each pod's configuration cut from the fleet's. Its one invalidation rule: a
// remembered result is used only while everything it was computed from is what it was, compared by
// what identifies each part:
//   - a target by its UID and metadata.generation (which moves with every spec change, and not with
//     status writes), and its selection by content (subscriptions, outputs, pipeline labels);
//   - its TargetProfile and the Secrets that profile names by content (a digest per profile per reconcile);
//   - what every target is checked against (outputs, processors, subscriptions) by content (render.Shared);
//   - a pod's configuration by the results it is cut from and the fleet's shared part.
//
// The zero Memo is empty and ready. A Memo is not safe for concurrent use: one Cluster's reconciles never
// overlap.
type Memo struct {
	// pass counts the Render calls that went over the targets; an entry not seen by the current pass is a
	// target no longer selected. renders counts every Render call.
	pass    uint64
	renders uint64
	// changed logs the names of the latest results kept or dropped; its count is the number of all of them.
	changed changelog.Log
	// version numbers results: a new result gets the next one, so that a pod's key changes with any of
	// its targets.
	version uint64
	shared  *render.Shared
	// sharedVersion moves when shared renders targets differently from the one before.
	sharedVersion uint64
	targets       map[string]*targetEntry
	// inOrder are the entries of the last pass's targets, in the selection's order.
	inOrder []*targetEntry
	// rendered holds the configuration of every target that renders, failed the skips of those that do
	// not; subscriptions counts, per subscription, the targets that render and use it, consulted the targets
	// that consulted it.
	rendered      map[string]gnmic.TargetConfig
	failed        map[string]render.SkipError
	subscriptions map[string]int
	consulted     map[string]int
	// profiles are this pass's digests of the TargetProfiles with their Secrets, made on first use.
	profiles     map[string]string
	profilesPass uint64
	// lastProfile is the digest profileDigest gave last in this pass (hasLastProfile: it gave one).
	lastProfile    profileDigest
	hasLastProfile bool

	// seed hashes names into pod keys; pods remembers each pod's last cut; restDigest is the digest of the
	// non-target part of the configuration pods were last cut from.
	seed  maphash.Seed
	pods  map[int]*podEntry
	rests map[uint64]string

	// prepared is the last selection's Prepared, picks each Target's pick under it (select.go), order their
	// names sorted; selectEpoch moves with prepared, memberVersions per Pipeline with its Targets' picks,
	// owns are the Pipelines' own selections.
	// selection is the last Select's Selection (hasSelection: there is one), given again while selectionKept;
	// profileNames are its targets' profiles (Profiles), nil until asked for.
	selection     selection.Selection
	hasSelection  bool
	selectionKept bool
	profileNames  []string
	// patched tells that the last Select made its Selection from the one of Select number patchedFrom
	// (patchSelection); moved are the entries whose Target it found to be another object, movedSelected where
	// the selected ones are in the Selection. renderedPass and recordedPass are the numbers of the Selects whose
	// Selection the last Render and the last Recorded went by.
	patched                    bool
	patchedFrom                uint64
	moved                      []movedTarget
	movedSelected              []int
	renderedPass, recordedPass uint64
	// unchecked are the entries the last TargetsToCheck yielded (not found right) and no NoteChecked found right
	// since, and those forgotten since (ForgetChecked); checkedAt is what that call was asked for, toCheck what it
	// yielded.
	unchecked map[*pickEntry]struct{}
	checkedAt checkPoint
	toCheck   []*pickEntry
	// assembled is what the last Render gave, given again by a Render of a kept Selection when nothing else it
	// reads changed.
	assembled assembly
	// renderKept tells that the last Render gave what the one before gave; namesKept that it
	// rendered the same targets (NamesKept); assembledOK that its configuration as a whole was valid.
	renderKept, namesKept, assembledOK bool

	prepared *selection.Prepared
	picks    map[string]*pickEntry
	// listed are the entries of the last Select's Targets, in the order they were listed.
	listed         []*pickEntry
	order          []string
	selectPass     uint64
	selectEpoch    uint64
	memberVersions map[string]uint64
	owns           map[string]ownEntry
	// current and last are what Recorded gives, recordedFor what they were read for, recordedVersion moves
	// with them.
	current, last   map[string]int
	recordedFor     string
	recordedVersion uint64
}

// targetEntry is one target's result with what it was computed from.
type targetEntry struct {
	name          string
	uid           types.UID
	generation    int64
	subscriptions []string
	outputs       []string
	labels        map[string]string
	profile       string
	profileDigest string
	sharedVersion uint64

	result  render.TargetResult
	version uint64
	seen    uint64
}

// matches tells whether the entry was computed from what st and its profile are now.
func (e *targetEntry) matches(st selection.SelectedTarget, profileDigest string, sharedVersion uint64) bool {
	t := st.Target
	return e.uid == t.UID && e.generation == t.Generation && e.profile == t.Spec.Profile &&
		e.profileDigest == profileDigest && e.sharedVersion == sharedVersion &&
		slices.Equal(e.subscriptions, st.Subscriptions) && slices.Equal(e.outputs, st.Outputs) && maps.Equal(e.labels, st.Labels)
}

// Render is render.PodConfig(sel, sel.TargetNames(), conn), rendering only the targets whose result cannot
// be reused. The configuration's Targets map belongs to the Memo: it is valid until the next Render, and
// nobody may change it.
//
// sel must be the last Select's Selection.
func (m *Memo) Render(sel selection.Selection, conn render.Connections) (gnmic.Config, []render.SkipError, error) {
	m.init()
	m.renders++
	shared := render.NewShared(sel, conn)
	sharedBefore := m.sharedVersion
	if !shared.Equal(m.shared) {
		m.sharedVersion++
	}
	m.shared = shared
	renderedBefore := m.renderedPass
	m.renderedPass = m.selectPass
	m.renderKept = m.selectionKept && m.assembled.valid && m.assembled.sharedVersion == m.sharedVersion && m.sameProfiles(conn)
	if m.renderKept {
		m.namesKept = true
		return m.assembled.cfg, m.assembled.skips, m.assembled.err
	}
	m.namesKept = false
	if m.patched && renderedBefore == m.patchedFrom && m.sharedVersion == sharedBefore && len(m.inOrder) == len(sel.Targets) &&
		m.sameProfiles(conn) {
		// The Selection the last pass went over, with some Targets other objects: only those are looked at.
		m.namesKept = true
		for _, i := range m.movedSelected {
			if m.renderAt(i, sel.Targets[i], shared, conn) {
				m.namesKept = false
			}
		}
	} else {
		m.pass++
		// A target is first looked for where the last pass had it (the selection is sorted by name: the same
		// names, the same places): every entry of inOrder is one of targets, under its name.
		m.inOrder = slices.Grow(m.inOrder[:0], len(sel.Targets))[:len(sel.Targets)]
		for i, st := range sel.Targets {
			m.renderAt(i, st, shared, conn)
		}
		clear(m.inOrder[len(sel.Targets):cap(m.inOrder)]) // nothing beyond the selection is kept alive
		for name, e := range m.targets {
			if e.seen != m.pass {
				m.drop(name, e)
			}
		}
	}
	cfg, skips, err := m.assemble()
	m.assembled = assembly{cfg: cfg, skips: skips, err: err, sharedVersion: m.sharedVersion, valid: true}
	m.namesKept = m.namesKept && (err == nil) == m.assembledOK
	m.assembledOK = err == nil
	return cfg, skips, err
}

// NamesKept tells whether the last Render rendered the same targets as the one before, over the same selected
// names, with the same outcome for the configuration as a whole: then a list made of those names alone (which
// targets render) is still right.
func (m *Memo) NamesKept() bool { return m.namesKept }

// renderAt brings the entry of st, the i-th selected target, up to date in this pass: it keeps the entry when it
// was computed from what st and its profile are now, and renders the target again otherwise. It tells whether
// the target renders now where it did not, or the other way round.
func (m *Memo) renderAt(i int, st selection.SelectedTarget, shared *render.Shared, conn render.Connections) (flipped bool) {
	name := st.Target.Name
	digest := m.profileDigest(st.Target.Spec.Profile, conn)
	e := m.inOrder[i]
	if e == nil || e.name != name {
		e = m.targets[name]
	}
	if e == nil || !e.matches(st, digest, m.sharedVersion) {
		m.drop(name, e)
		m.version++
		old := e
		e = &targetEntry{name: name, uid: st.Target.UID, generation: st.Target.Generation, subscriptions: slices.Clone(st.Subscriptions),
			outputs: slices.Clone(st.Outputs), labels: maps.Clone(st.Labels), profile: st.Target.Spec.Profile,
			profileDigest: digest, sharedVersion: m.sharedVersion, result: shared.Target(st), version: m.version}
		m.keep(name, e)
		flipped = old == nil || (old.result.Err == nil) != (e.result.Err == nil)
	}
	e.seen = m.pass
	m.inOrder[i] = e
	return flipped
}

// assembly is what a Render gave, and under which version of the shared part.
type assembly struct {
	cfg           gnmic.Config
	skips         []render.SkipError
	err           error
	sharedVersion uint64
	valid         bool
}

// sameProfiles tells whether every profile the last Render read digests as it did then.
func (m *Memo) sameProfiles(conn render.Connections) bool {
	if m.profilesPass != m.pass {
		return false
	}
	for name, d := range m.profiles {
		if digestOf(name, conn) != d {
			return false
		}
	}
	return true
}

// init makes the maps of an empty Memo.
func (m *Memo) init() {
	if m.targets != nil {
		return
	}
	m.targets = map[string]*targetEntry{}
	m.rendered = map[string]gnmic.TargetConfig{}
	m.failed = map[string]render.SkipError{}
	m.subscriptions = map[string]int{}
	m.consulted = map[string]int{}
	m.pods = map[int]*podEntry{}
	m.seed = maphash.MakeSeed()
	m.picks = map[string]*pickEntry{}
	m.unchecked = map[*pickEntry]struct{}{}
	m.memberVersions = map[string]uint64{}
	m.owns = map[string]ownEntry{}
	m.current, m.last = map[string]int{}, map[string]int{}
}

// noteChange counts a result kept or dropped, and logs its name.
func (m *Memo) noteChange(name string) {
	m.changed.Window = changeLog
	m.changed.Note(name)
}

// changeLog is how many changes a pod's cut can be brought up to date over (SubsetOf): more, and it is cut again.
const changeLog = 1024

// changedSince gives the names of the results kept or dropped after the change numbered from, if the log still
// has them all.
func (m *Memo) changedSince(from uint64) ([]string, bool) { return m.changed.Since(from) }

// keep records a new entry.
func (m *Memo) keep(name string, e *targetEntry) {
	m.noteChange(name)
	m.targets[name] = e
	for _, sub := range e.result.Consulted {
		m.consulted[sub]++
	}
	if e.result.Err != nil {
		m.failed[name] = render.SkipError{Kind: selection.KindTarget, Name: name, Err: e.result.Err}
		return
	}
	m.rendered[name] = e.result.Config
	for _, sub := range e.subscriptions {
		m.subscriptions[sub]++
	}
}

// drop forgets an entry (nil: none).
func (m *Memo) drop(name string, e *targetEntry) {
	if e == nil {
		return
	}
	m.noteChange(name)
	delete(m.targets, name)
	for _, sub := range e.result.Consulted {
		if m.consulted[sub]--; m.consulted[sub] == 0 {
			delete(m.consulted, sub)
		}
	}
	if e.result.Err != nil {
		delete(m.failed, name)
		return
	}
	delete(m.rendered, name)
	for _, sub := range e.subscriptions {
		if m.subscriptions[sub]--; m.subscriptions[sub] == 0 {
			delete(m.subscriptions, sub)
		}
	}
}

// assemble is the fleet's configuration from the entries.
func (m *Memo) assemble() (gnmic.Config, []render.SkipError, error) {
	failed := make([]render.SkipError, 0, len(m.failed))
	for _, skip := range m.failed {
		failed = append(failed, skip)
	}
	return m.shared.Assemble(m.rendered, slices.Sorted(maps.Keys(m.subscriptions)), failed,
		func(sub string) bool { return m.consulted[sub] > 0 })
}

// profileDigest identifies what a target's rendering reads of its profile: the TargetProfile's spec, the
// Secrets it names and whether the Cluster's target TLS Secret could hold its TLS Secret. Made once per pass.
func (m *Memo) profileDigest(name string, conn render.Connections) string {
	if m.profilesPass != m.pass {
		m.profiles, m.profilesPass, m.hasLastProfile = map[string]string{}, m.pass, false
	}
	if m.hasLastProfile && m.lastProfile.name == name {
		return m.lastProfile.digest // most targets share their neighbour's profile: no map lookup
	}
	d, ok := m.profiles[name]
	if !ok {
		d = digestOf(name, conn)
		m.profiles[name] = d
	}
	m.lastProfile, m.hasLastProfile = profileDigest{name: name, digest: d}, true
	return d
}

// profileDigest is one profile's digest in a pass.
type profileDigest struct{ name, digest string }

// digestOf is the digest of the named profile as conn has it (profileDigest).
func digestOf(name string, conn render.Connections) string {
	h := sha256.New()
	if p := conn.Profiles[name]; p != nil {
		writeJSON(h, p.Spec)
		for _, ref := range profileSecrets(p) {
			data, found := conn.Secrets[ref]
			writeJSON(h, struct {
				Name    string
				Found   bool
				Data    map[string][]byte
				Omitted string
			}{ref, found, data, errorText(conn.TLSOmitted[ref])})
		}
	}
	return string(h.Sum(nil))
}

// profileSecrets are the Secrets a profile names.
func profileSecrets(p *v1alpha1.TargetProfile) []string {
	out := []string{p.Spec.CredentialsRef}
	if p.Spec.TLS != nil {
		out = append(out, p.Spec.TLS.SecretRef)
	}
	return out
}

func writeJSON(h interface{ Write([]byte) (int, error) }, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(err.Error())
	}
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(b)))
	_, _ = h.Write(n[:])
	_, _ = h.Write(b)
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// PodKey identifies a pod's cut of the fleet's configuration: equal keys, equal cuts.
type PodKey struct {
	rest     string
	sum, xor uint64
	n        int
}

// podEntry is a pod's last cut, and what was last made of it.
type podEntry struct {
	key PodKey
	cfg gnmic.Config
	// cut is the CutKey the cut was last given for (hasCut: it was, through SubsetOf), holds the names it was
	// cut for.
	cut    CutKey
	hasCut bool
	holds  map[string]bool

	hasChanges bool
	changes    ChangesKey
	desired    []string
	changed    []string
	step       StepKey
	stepConfig gnmic.Config
	stepHash   string
}

// NamesKey identifies a list of names, in any order.
type NamesKey struct {
	sum, xor uint64
	n        int
}

// Names is the key of names.
func (m *Memo) Names(names []string) NamesKey {
	m.init()
	k := NamesKey{n: len(names)}
	for _, name := range names {
		h := mix(maphash.String(m.seed, name))
		k.sum += h
		k.xor ^= mix(h ^ 0x9e3779b97f4a7c15)
	}
	return k
}

// ChangesKey identifies what a pod's desired and changed targets are made of: its cut, the targets placed
// on it (Placement: a version the caller moves whenever it places anew), and what its collector acknowledged
// (Sent names the configuration; SentNames its targets, when Sent is not a fingerprint of the whole
// configuration, which names them: zero otherwise).
type ChangesKey struct {
	Pod       PodKey
	Placement uint64
	Sent      string
	SentNames NamesKey
}

// Changes is make() for the pod, remembered while the key is the same.
func (m *Memo) Changes(ordinal int, key ChangesKey, make func() (desired, changed []string)) (desired, changed []string) {
	e := m.pods[ordinal]
	if e != nil && e.hasChanges && e.changes == key {
		return e.desired, e.changed
	}
	desired, changed = make()
	if e != nil && e.key == key.Pod {
		e.hasChanges, e.changes, e.desired, e.changed = true, key, desired, changed
	}
	return desired, changed
}

// StepKey identifies what the configuration of a pod's handover step is made of: its cut, what its collector
// acknowledged, and the step's targets (those sent, and those updated). A step that sends again what was
// acknowledged (Resend) has its targets named by Sent, when Sent fingerprints the whole configuration: Send
// and Update are zero then.
type StepKey struct {
	Pod          PodKey
	Sent         string
	Resend       bool
	Send, Update NamesKey
}

// Step is make() for the pod: the step's configuration and its fingerprint, remembered while the key is the
// same. A failed make is not remembered.
func (m *Memo) Step(ordinal int, key StepKey, make func() (gnmic.Config, string, error)) (gnmic.Config, string, error) {
	e := m.pods[ordinal]
	if e != nil && e.stepHash != "" && e.step == key {
		return e.stepConfig, e.stepHash, nil
	}
	cfg, hash, err := make()
	if err == nil && e != nil && e.key == key.Pod {
		e.step, e.stepConfig, e.stepHash = key, cfg, hash
	}
	return cfg, hash, err
}

// Subset is render.Subset(full, names) for the pod with this ordinal, and the cut's key. The cut is remembered
// per pod and given again while the names, their targets' results and the non-target part of full are what
// they were. full is the configuration Render gave, with what the caller added to its non-target part
// (tunnel-target-matches), the same for every call until the next Render. The cut is shared: nobody may
// change it.
func (m *Memo) Subset(ordinal int, full gnmic.Config, names []string) (gnmic.Config, PodKey) {
	key := m.podKey(full, names)
	if e, ok := m.pods[ordinal]; ok && e.key == key {
		return e.cfg, key
	}
	cfg := render.Subset(full, names)
	m.pods[ordinal] = &podEntry{key: key, cfg: cfg}
	return cfg, key
}

// CutKey identifies a pod's cut by what its names come from instead of by its names: the placement that put
// targets on the pod (a version the caller moves whenever it places anew) and the configuration its collector
// acknowledged, whose targets the cut keeps too (its fingerprint; empty when the acknowledged targets are not
// known by a fingerprint), with the targets' results (as of the change numbered changes) and the non-target part
// of the configuration.
type CutKey struct {
	placement uint64
	sent      string
	changes   uint64
	rest      string
}

// SubsetOf is Subset(ordinal, full, names()) for a pod whose names follow from placement and sent alone: while
// these and the non-target part of full are what they were at the pod's last cut, and no result of the names it
// was cut for changed since, that cut is given again without its names being made or hashed.
func (m *Memo) SubsetOf(ordinal int, full gnmic.Config, placement uint64, sent string, names func() []string) (gnmic.Config, PodKey) {
	m.init()
	key := CutKey{placement: placement, sent: sent, changes: m.changed.Count(), rest: m.restDigest(full)}
	if e, ok := m.pods[ordinal]; ok && e.hasCut && m.cutHolds(e, key) {
		e.cut = key
		return e.cfg, e.key
	}
	ns := names()
	cfg, podKey := m.Subset(ordinal, full, ns)
	e := m.pods[ordinal]
	e.cut, e.hasCut, e.holds = key, true, make(map[string]bool, len(ns))
	for _, n := range ns {
		e.holds[n] = true
	}
	return cfg, podKey
}

// cutHolds tells whether the pod's last cut is still the one for key: the same placement, acknowledged
// configuration and non-target part, and none of the names it was cut for kept or dropped since.
func (m *Memo) cutHolds(e *podEntry, key CutKey) bool {
	if e.cut.placement != key.placement || e.cut.sent != key.sent || e.cut.rest != key.rest {
		return false
	}
	since, ok := m.changedSince(e.cut.changes)
	if !ok {
		return false
	}
	for _, n := range since {
		if e.holds[n] {
			return false
		}
	}
	return true
}

// ForgetPods drops the cuts of the pods not in keep.
func (m *Memo) ForgetPods(keep func(ordinal int) bool) {
	for ordinal := range m.pods {
		if !keep(ordinal) {
			delete(m.pods, ordinal)
		}
	}
}

// podKey hashes the names with their results' versions (in any order) and the non-target part of full.
func (m *Memo) podKey(full gnmic.Config, names []string) PodKey {
	m.init()
	key := PodKey{rest: m.restDigest(full), n: len(names)}
	for _, name := range names {
		var version uint64 // full's Targets are the rendered entries' (Render)
		if e := m.targets[name]; e != nil && e.result.Err == nil {
			version = e.version
		}
		h := mix(maphash.String(m.seed, name) ^ mix(version+0x9e3779b97f4a7c15))
		key.sum += h
		key.xor ^= mix(h)
	}
	return key
}

// restDigest is the digest of full's subscriptions, outputs, inputs, processors and tunnel-target-matches,
// made once per Render.
func (m *Memo) restDigest(full gnmic.Config) string {
	if d, ok := m.rests[m.renders]; ok {
		return d
	}
	h := sha256.New()
	writeJSON(h, gnmic.Config{Subscriptions: full.Subscriptions, Outputs: full.Outputs, Inputs: full.Inputs,
		Processors: full.Processors, TunnelTargetMatches: full.TunnelTargetMatches})
	d := string(h.Sum(nil))
	m.rests = map[uint64]string{m.renders: d}
	return d
}

// mix is SplitMix64's finalizer.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ (x >> 31)
}
