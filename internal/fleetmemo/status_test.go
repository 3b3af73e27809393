package fleetmemo

import (
	"cmp"
	"maps"
	"testing"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
)

// listedOf is the Listed of the named Target after the last Select.
func listedOf(t *testing.T, m *Memo, name string) Listed {
	t.Helper()
	for l := range m.Targets() {
		if l.Target().Name == name {
			return l
		}
	}
	t.Fatalf("target %s is not listed", name)
	return Listed{}
}

// A status found right stays right only while its key, the Target's selection and its status map are the same.
func TestCheckedFollowsWhatTheEntryIsWorkedOutFrom(t *testing.T) {
	read := map[string]gnmic.TargetStatus{"t00": {State: gnmic.StateRunning}}
	reread := map[string]gnmic.TargetStatus{"t00": {State: gnmic.StateRunning}}
	key := NewStatusKey(3, 1, ReadOf(true, read))
	reads := map[int]CollectorRead{1: ReadOf(true, read), 2: ReadOf(true, reread)}
	type now struct {
		placement uint64
		reads     map[int]CollectorRead
	}
	for _, tc := range []struct {
		name   string
		change func(w *world)
		now    now
		want   bool
	}{
		{name: "nothing changed", want: true},
		{name: "placed anew", now: now{placement: 4}},
		{name: "its collector read again, to the same states", now: now{reads: map[int]CollectorRead{1: ReadOf(true, reread)}}},
		{name: "its collector could not be read", now: now{reads: map[int]CollectorRead{1: ReadOf(false, read)}}},
		{name: "its collector not read", now: now{reads: map[int]CollectorRead{2: ReadOf(true, read)}}},
		{name: "its status written", change: func(w *world) {
			c := w.targets["t00"].DeepCopy()
			c.Status.ClusterStates = map[string]v1alpha1.TargetClusterState{cluster: {State: v1alpha1.TargetAssigned}}
			w.targets["t00"] = c
		}},
		// Any new object of the Target (as the cache decodes it) has a status map of its own: it is looked at again.
		{name: "its spec changed, not its status", change: func(w *world) {
			c := w.targets["t00"].DeepCopy()
			c.Generation++
			c.Spec.Address = "10.0.0.9:57400"
			w.targets["t00"] = c
		}},
		{name: "made again under its name", change: func(w *world) {
			c := w.targets["t00"].DeepCopy()
			c.UID = w.uid()
			w.targets["t00"] = c
		}},
		{name: "no longer selected", change: func(w *world) {
			c := w.targets["t00"].DeepCopy()
			c.Labels = map[string]string{"role": "none"}
			w.targets["t00"] = c
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(1)
			w.targets["t00"].Labels = map[string]string{"role": "a"}
			w.targets["t00"].Status.ClusterStates = map[string]v1alpha1.TargetClusterState{cluster: {State: v1alpha1.TargetPending}}
			for _, p := range w.pipelines {
				p.Spec.TargetRefs = nil
			}
			var m Memo
			m.Select(cluster, w.objects(), false)
			l := listedOf(t, &m, "t00")
			if !l.Selected() {
				t.Fatal("t00 is not selected")
			}
			if l.Checked(3, reads) {
				t.Fatal("checked before any NoteChecked")
			}
			l.NoteChecked(key)
			if tc.change != nil {
				tc.change(w)
			}
			m.Select(cluster, w.objects(), false)
			placement, rs := cmp.Or(tc.now.placement, 3), tc.now.reads
			if rs == nil {
				rs = reads
			}
			if got := listedOf(t, &m, "t00").Checked(placement, rs); got != tc.want {
				t.Errorf("Checked = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestForgetChecked(t *testing.T) {
	w := newWorld(2)
	var m Memo
	m.Select(cluster, w.objects(), false)
	l := listedOf(t, &m, "t01")
	reads := map[int]CollectorRead{0: ReadOf(true, nil)}
	l.NoteChecked(NewStatusKey(1, 0, reads[0]))
	if !l.Checked(1, reads) {
		t.Fatal("not checked after NoteChecked")
	}
	l.ForgetChecked()
	if l.Checked(1, reads) {
		t.Fatal("checked after ForgetChecked")
	}
}

func TestLists(t *testing.T) {
	w := newWorld(3)
	var m Memo
	m.Select(cluster, w.objects(), false)
	uid := w.targets["t02"].UID
	if !m.Lists("t02", uid) || m.Lists("t02", "other") || m.Lists("t99", uid) {
		t.Fatal("Lists does not tell the listed Target by name and UID")
	}
	delete(w.targets, "t02")
	m.Select(cluster, w.objects(), false)
	if m.Lists("t02", uid) {
		t.Fatal("a deleted Target is still listed")
	}
}

// TestTargetsToCheckYieldsEveryTargetNotFoundRight drives a Memo through random changes, lists brought up to
// date in place, placements and collector reads, with status passes that note, forget or leave each Target they
// are given (and reconciles that end before their pass), and checks at every pass that TargetsToCheck yields
// every Target whose Checked is false: a Target it leaves out would keep a wrong status.
func TestTargetsToCheckYieldsEveryTargetNotFoundRight(t *testing.T) {
	for seed := range uint64(40) {
		w := newWorld(seed)
		var m Memo
		var listed []v1alpha1.Target
		var listedFrom map[string]*v1alpha1.Target
		placement := uint64(1)
		states := []map[string]gnmic.TargetStatus{{}, {}, {}}
		readsNow := func() map[int]CollectorRead {
			return map[int]CollectorRead{0: ReadOf(true, states[0]), 1: ReadOf(true, states[1]), 2: ReadOf(seed%5 != 0, states[2])}
		}
		for step := range 80 {
			what := ""
			if w.rng.IntN(3) == 0 {
				what = w.change()
			}
			objects := w.objects()
			unchanged := listedFrom != nil && maps.Equal(listedFrom, w.targets)
			switch {
			case unchanged:
				objects.Targets = listed
			case listedFrom != nil && w.rng.IntN(3) > 0:
				objects.Targets = refreshInPlace(listed, listedFrom, w.targets)
			}
			listed, listedFrom = objects.Targets, maps.Clone(w.targets)
			m.Select(cluster, objects, unchanged)
			if w.rng.IntN(10) == 0 {
				placement++
			}
			if w.rng.IntN(10) == 0 {
				states[w.rng.IntN(3)] = map[string]gnmic.TargetStatus{}
			}
			if w.rng.IntN(8) == 0 {
				continue // the reconcile ends before its status pass
			}
			if w.rng.IntN(6) == 0 { // forgotten outside a pass
				for l := range m.Targets() {
					l.ForgetChecked()
					break
				}
			}
			reads := readsNow()
			if seed%4 == 1 && step%10 >= 7 {
				delete(reads, 2) // its pod is gone, or not read
			}
			remember := w.rng.IntN(15) > 0
			yielded := map[string]bool{}
			var given []Listed
			podOf := func(name string) int { return int(name[len(name)-1]) % 3 }
			onPod := func(ordinal int) []string {
				var names []string
				for name := range w.targets {
					if podOf(name) == ordinal {
						names = append(names, name)
					}
				}
				return names
			}
			for l := range m.TargetsToCheck(placement, reads, remember, onPod) {
				yielded[l.Target().Name] = true
				given = append(given, l)
			}
			for l := range m.Targets() {
				if !l.Checked(placement, reads) && !yielded[l.Target().Name] {
					t.Fatalf("seed %d step %d (%s, unchanged %v, patched %v, moved %d): %s is not right (Checked false) and was not yielded (checked %+v selected %v)", seed, step, what, unchanged, m.patched, len(m.moved), l.Target().Name, l.e.checked.valid, l.Selected())
				}
			}
			for _, l := range given {
				switch w.rng.IntN(4) {
				case 0, 1:
					if remember {
						pod := podOf(l.Target().Name)
						l.NoteChecked(NewStatusKey(placement, pod, reads[pod]))
					}
				case 2:
					l.ForgetChecked()
				}
			}
		}
	}
}
