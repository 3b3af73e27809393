package fleetmemo

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/clusterplacement"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/internal/render"
	"github.com/gnmic-operator/gnmic-operator/internal/selection"
)

// world is a namespace as the reconciler lists it, changed at random as users and the API server change it:
// every spec change moves the object's generation, every recreation gives a new UID.
type world struct {
	rng       *rand.Rand
	uids, rvs int
	targets   map[string]*v1alpha1.Target
	pipelines map[string]*v1alpha1.Pipeline
	subs      map[string]*v1alpha1.Subscription
	outputs   map[string]*v1alpha1.Output
	profiles  map[string]*v1alpha1.TargetProfile
	secrets   map[string]map[string][]byte
	omitted   map[string]error
}

const cluster = "c"

func newWorld(seed uint64) *world {
	w := &world{rng: rand.New(rand.NewPCG(seed, 7)), targets: map[string]*v1alpha1.Target{}, pipelines: map[string]*v1alpha1.Pipeline{},
		subs: map[string]*v1alpha1.Subscription{}, outputs: map[string]*v1alpha1.Output{}, profiles: map[string]*v1alpha1.TargetProfile{},
		secrets: map[string]map[string][]byte{}, omitted: map[string]error{}}
	for i := range 30 {
		w.addTarget(fmt.Sprintf("t%02d", i))
	}
	w.setSubscription("s1", "")
	w.setSubscription("s2", "")
	w.setOutput("o1", 0)
	w.setOutput("o2", 9804)
	w.setProfile("p1", "creds1", "")
	w.setProfile("p2", "creds2", "tls2")
	w.secrets["creds1"] = map[string][]byte{render.UsernameKey: []byte("u"), render.PasswordKey: []byte("p")}
	w.secrets["creds2"] = map[string][]byte{render.TokenKey: []byte("t")}
	w.secrets["tls2"] = map[string][]byte{render.CAFile: []byte("ca")}
	w.setPipeline("a", []string{"s1"}, []string{"o1"}, "a")
	w.setPipeline("b", []string{"s2"}, nil, "b")
	return w
}

func (w *world) uid() types.UID {
	w.uids++
	return types.UID(fmt.Sprintf("uid-%d", w.uids))
}

func (w *world) pick(options ...string) string { return options[w.rng.IntN(len(options))] }

// rv is a new resourceVersion: every write of an object gets one.
func (w *world) rv() string {
	w.rvs++
	return fmt.Sprint(w.rvs)
}

func (w *world) addTarget(name string) {
	w.targets[name] = &v1alpha1.Target{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: w.uid(), ResourceVersion: w.rv(), Generation: 1,
			Labels: map[string]string{"role": w.pick("a", "b", "c")}},
		Spec: v1alpha1.TargetSpec{Address: "10.0.0.1:57400", Profile: w.pick("p1", "p2", "p3")},
	}
}

func (w *world) setSubscription(name, mode string) {
	gen := int64(1)
	if s := w.subs[name]; s != nil {
		gen = s.Generation + 1
	}
	w.subs[name] = &v1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Name: name, UID: w.uid(), Generation: gen},
		Spec: v1alpha1.SubscriptionSpec{Paths: []string{"/" + w.pick("interfaces", "system")}, Mode: mode}}
}

func (w *world) setOutput(name string, port int) {
	config := `{"filename":"/tmp/` + w.pick("x", "y") + `"}`
	typ := "file"
	if port != 0 {
		typ, config = "prometheus", fmt.Sprintf(`{"listen":":%d"}`, port)
	}
	w.outputs[name] = &v1alpha1.Output{ObjectMeta: metav1.ObjectMeta{Name: name, UID: w.uid()},
		Spec: v1alpha1.OutputSpec{Type: typ, Config: rawJSON(config)}}
}

func (w *world) setProfile(name, creds, tlsSecret string) {
	spec := v1alpha1.TargetProfileSpec{CredentialsRef: creds, Timeout: &metav1.Duration{Duration: time.Duration(1+w.rng.IntN(3)) * time.Second},
		Tags: map[string]string{"site": w.pick("x", "y")}}
	if tlsSecret != "" {
		spec.TLS = &v1alpha1.TargetTLS{SecretRef: tlsSecret, ServerName: w.pick("a", "b")}
	}
	w.profiles[name] = &v1alpha1.TargetProfile{ObjectMeta: metav1.ObjectMeta{Name: name, UID: w.uid()}, Spec: spec}
}

func (w *world) setPipeline(name string, subs, outputs []string, role string) {
	p := &v1alpha1.Pipeline{ObjectMeta: metav1.ObjectMeta{Name: name, UID: w.uid()}, Spec: v1alpha1.PipelineSpec{ClusterRef: cluster}}
	p.Spec.SubscriptionRefs = subs
	if outputs != nil {
		p.Spec.Outputs = &v1alpha1.OutputSelection{OutputRefs: outputs}
	}
	p.Spec.TargetSelectors = []metav1.LabelSelector{{MatchLabels: map[string]string{"role": role}}}
	if w.rng.IntN(3) == 0 {
		p.Spec.TargetRefs = []string{fmt.Sprintf("t%02d", w.rng.IntN(40))}
	}
	if w.rng.IntN(3) == 0 {
		p.Spec.Labels = map[string]string{"tier": w.pick("1", "2")}
	}
	w.pipelines[name] = p
}

// change makes one random change.
func (w *world) change() string {
	name := fmt.Sprintf("t%02d", w.rng.IntN(40))
	t := w.targets[name]
	switch op := w.rng.IntN(17); {
	case op < 3 && t == nil:
		w.addTarget(name)
		return "create target " + name
	case op < 3:
		delete(w.targets, name)
		return "delete target " + name
	case op < 5 && t != nil:
		c := t.DeepCopy()
		c.Labels = map[string]string{"role": w.pick("a", "b", "c")}
		c.ResourceVersion = w.rv()
		w.targets[name] = c // labels: no new generation
		return "relabel target " + name
	case op < 8 && t != nil:
		c := t.DeepCopy()
		c.Generation++
		c.ResourceVersion = w.rv()
		c.Spec.Address = fmt.Sprintf("10.0.0.%d:57400", w.rng.IntN(3))
		c.Spec.Profile = w.pick("p1", "p2", "p3")
		if w.rng.IntN(2) == 0 {
			c.Spec.Tags = map[string]string{"k": w.pick("1", "2")}
		}
		w.targets[name] = c
		return "change target " + name
	case op == 8:
		p := w.pick("p1", "p2", "p3")
		w.setProfile(p, w.pick("creds1", "creds2", ""), w.pick("", "tls2"))
		return "change profile " + p
	case op == 9:
		s := w.pick("creds1", "creds2", "tls2")
		switch w.rng.IntN(4) {
		case 0:
			delete(w.secrets, s)
		case 1:
			w.secrets[s] = map[string][]byte{render.UsernameKey: []byte("only")}
		default:
			w.secrets[s] = map[string][]byte{render.UsernameKey: []byte(w.pick("u", "v")), render.PasswordKey: []byte("p"),
				render.CAFile: []byte("ca")}
		}
		return "change secret " + s
	case op == 10:
		s := w.pick("s1", "s2", "s3")
		if w.rng.IntN(4) == 0 {
			delete(w.subs, s)
			return "delete subscription " + s
		}
		w.setSubscription(s, w.pick("", "", "history", "bogus"))
		return "change subscription " + s
	case op == 11:
		p := w.pick("a", "b", "c")
		if w.rng.IntN(4) == 0 {
			delete(w.pipelines, p)
			return "delete pipeline " + p
		}
		w.setPipeline(p, []string{w.pick("s1", "s2", "s3")}, []string{w.pick("o1", "o2")}, w.pick("a", "b", "c"))
		return "change pipeline " + p
	case op == 12:
		o := w.pick("o1", "o2")
		w.setOutput(o, []int{0, 9804, 7890}[w.rng.IntN(3)])
		return "change output " + o
	case op == 14 && t != nil:
		c := t.DeepCopy() // a status write: no new generation
		pods := []string{"", "c-0", "c-1", "c-x", "c-a-0", "other-1"}
		c.Status.ClusterStates = map[string]v1alpha1.TargetClusterState{
			cluster: {Pod: pods[w.rng.IntN(len(pods))], LastPod: pods[w.rng.IntN(len(pods))]},
			"other": {Pod: "other-1"},
		}
		if w.rng.IntN(5) == 0 {
			c.Status.ClusterStates = nil
		}
		c.ResourceVersion = w.rv()
		w.targets[name] = c
		return "status of target " + name
	case op == 13:
		if _, ok := w.omitted["tls2"]; ok {
			delete(w.omitted, "tls2")
		} else {
			w.omitted["tls2"] = errors.New("the target TLS Secret is full")
		}
		return "toggle omitted tls2"
	default:
		return "nothing"
	}
}

// objects lists the namespace as the reconciler does from its cache, without deep copies: new structs whose
// maps and slices are the stored objects' (which a change replaces, never edits).
func (w *world) objects() selection.Objects {
	var in selection.Objects
	for _, name := range sortedNames(w.targets) {
		in.Targets = append(in.Targets, *w.targets[name])
	}
	for _, name := range sortedNames(w.pipelines) {
		in.Pipelines = append(in.Pipelines, *w.pipelines[name].DeepCopy())
	}
	for _, name := range sortedNames(w.subs) {
		in.Subscriptions = append(in.Subscriptions, *w.subs[name].DeepCopy())
	}
	for _, name := range sortedNames(w.outputs) {
		in.Outputs = append(in.Outputs, *w.outputs[name].DeepCopy())
	}
	// A listing comes in no particular order.
	w.rng.Shuffle(len(in.Targets), func(i, j int) { in.Targets[i], in.Targets[j] = in.Targets[j], in.Targets[i] })
	return in
}

func (w *world) connections() render.Connections {
	conn := render.Connections{Profiles: map[string]*v1alpha1.TargetProfile{}, Secrets: map[string]map[string][]byte{},
		TLSOmitted: map[string]error{}, ReservedPorts: map[int32]string{7890: "the REST API"}}
	for name, p := range w.profiles {
		conn.Profiles[name] = p.DeepCopy()
	}
	for name, data := range w.secrets {
		conn.Secrets[name] = data
	}
	for name, err := range w.omitted {
		conn.TLSOmitted[name] = err
	}
	return conn
}

// refreshInPlace brings list, made from the objects in from, up to date with the objects in now, as the
// reconciler's refreshTargets does: a changed Target is written over in its place, a new one appended, a deleted
// one replaced by the list's last.
func refreshInPlace(list []v1alpha1.Target, from, now map[string]*v1alpha1.Target) []v1alpha1.Target {
	index := map[string]int{}
	for i := range list {
		index[list[i].Name] = i
	}
	for _, name := range sortedNames(now) {
		if from[name] == now[name] {
			continue
		}
		if i, ok := index[name]; ok {
			list[i] = *now[name]
		} else {
			index[name] = len(list)
			list = append(list, *now[name])
		}
	}
	for _, name := range sortedNames(from) {
		if _, ok := now[name]; ok {
			continue
		}
		i, last := index[name], len(list)-1
		list[i] = list[last]
		index[list[i].Name] = i
		list = list[:last]
		delete(index, name)
	}
	return list
}

// TestMemoEqualsFullRender drives a Memo through random sequences of changes to targets, profiles, Secrets,
// subscriptions, pipelines, outputs and pods, and compares at every step what it gives with a full render of
// the fleet and a full cut of every pod.
func TestMemoEqualsFullRender(t *testing.T) {
	for seed := range uint64(60) {
		w := newWorld(seed)
		var m Memo
		pods := 1 + w.rng.IntN(4)
		var listed []v1alpha1.Target
		var listedFrom map[string]*v1alpha1.Target
		lastOnPod, placements := map[int][]string{}, uint64(0)
		var lastRenders []string
		hasLastRenders := false
		for step := range 60 {
			var changes []string
			if w.rng.IntN(4) > 0 { // else a steady step
				for range 1 + w.rng.IntN(3) {
					changes = append(changes, w.change())
				}
			}
			if w.rng.IntN(10) == 0 {
				pods = 1 + w.rng.IntN(4)
				changes = append(changes, fmt.Sprintf("%d pods", pods))
			}
			objects := w.objects()
			// No Target changed since the last list: the reconciler gives that list again (observe's listTargets);
			// or it brings the last list up to date in place with the Targets that changed (refreshTargets).
			unchanged := listedFrom != nil && maps.Equal(listedFrom, w.targets)
			switch {
			case unchanged:
				objects.Targets = listed
			case listedFrom != nil && w.rng.IntN(2) == 0:
				objects.Targets = refreshInPlace(listed, listedFrom, w.targets)
				changes = append(changes, "(refreshed in place)")
			}
			listed, listedFrom = objects.Targets, maps.Clone(w.targets)
			sel := selection.Resolve(cluster, objects)
			where := fmt.Sprintf("seed %d step %d after %v (targets unchanged: %v)", seed, step, changes, unchanged)
			if got := m.Select(cluster, objects, unchanged); !reflect.DeepEqual(got, sel) {
				t.Fatalf("%s: selection\n got %+v\nwant %+v", where, got, sel)
			}
			for i := range objects.Pipelines {
				p := &objects.Pipelines[i]
				alone := objects
				alone.Pipelines = []v1alpha1.Pipeline{*p}
				want := selection.Resolve(cluster, alone).Summary()
				got := m.Own(p, func() selection.Selection { return selection.Resolve(cluster, alone) })
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: pipeline %s's own selection\n got %+v\nwant %+v", where, p.Name, got, want)
				}
			}
			c := &v1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}
			if seed%3 == 0 && step%20 >= 10 {
				c.Spec.Domains = []v1alpha1.ClusterDomain{{Name: "a"}}
			}
			wantCurrent, wantLast := clusterplacement.Recorded(c, sel)
			gotCurrent, gotLast, _ := m.Recorded(c)
			if !maps.Equal(gotCurrent, wantCurrent) || !maps.Equal(gotLast, wantLast) {
				t.Fatalf("%s: recorded pods\n got %v %v\nwant %v %v", where, gotCurrent, gotLast, wantCurrent, wantLast)
			}
			if w.rng.IntN(8) == 0 {
				continue // the reconcile ends before it renders (a Secret it could not read)
			}
			conn := w.connections()
			wantCfg, wantSkips, wantErr := render.PodConfig(sel, sel.TargetNames(), conn)
			gotCfg, gotSkips, gotErr := m.Render(sel, conn)
			if !reflect.DeepEqual(gotCfg, wantCfg) {
				t.Fatalf("%s: configuration\n got %+v\nwant %+v", where, gotCfg, wantCfg)
			}
			if got, want := skipTexts(gotSkips), skipTexts(wantSkips); !slices.Equal(got, want) {
				t.Fatalf("%s: skips\n got %q\nwant %q", where, got, want)
			}
			if errorText(gotErr) != errorText(wantErr) {
				t.Fatalf("%s: error %v, want %v", where, gotErr, wantErr)
			}
			// The names the reconciler makes of a Render alone (placeable) are the last ones while NamesKept.
			var renders []string
			for _, name := range sel.TargetNames() {
				if _, ok := wantCfg.Targets[name]; ok || wantErr != nil {
					renders = append(renders, name)
				}
			}
			if m.NamesKept() && hasLastRenders && !slices.Equal(renders, lastRenders) {
				t.Fatalf("%s: NamesKept, but the rendered names went from %v to %v", where, lastRenders, renders)
			}
			lastRenders, hasLastRenders = renders, true
			if wantErr != nil {
				continue
			}
			// The Cluster reconciler takes as many rendered targets as selected ones for all of them (placeable).
			selected := sel.TargetNames()
			for name := range gotCfg.Targets {
				if _, found := slices.BinarySearch(selected, name); !found {
					t.Fatalf("%s: rendered target %s is not selected", where, name)
				}
			}
			// The caller adds to the non-target part after Render, differently at each step (tunnel-target-matches).
			if rule := w.rng.IntN(3); rule > 0 {
				matches := map[string]gnmic.TunnelTargetMatch{fmt.Sprintf("rule-%d", rule): {ID: fmt.Sprintf("^r%d-", rule)}}
				gotCfg.TunnelTargetMatches, wantCfg.TunnelTargetMatches = matches, matches
			}
			// Each pod holds the targets that hash to it, plus, on some steps, a target it held before.
			onPod := map[int][]string{}
			for i, name := range sel.TargetNames() {
				onPod[(i*7+len(name))%pods] = append(onPod[(i*7+len(name))%pods], name)
			}
			if w.rng.IntN(3) == 0 && len(sel.Targets) > 0 {
				onPod[0] = append(onPod[0], sel.Targets[w.rng.IntN(len(sel.Targets))].Target.Name, "gone")
			}
			for o := range pods {
				// Half the seeds cut through SubsetOf, with a placement version that moves when the pod's names do.
				var got gnmic.Config
				if seed%2 == 0 {
					if !slices.Equal(lastOnPod[o], onPod[o]) {
						placements++
						lastOnPod[o] = onPod[o]
					}
					got, _ = m.SubsetOf(o, gotCfg, placements, "", func() []string { return onPod[o] })
				} else {
					got, _ = m.Subset(o, gotCfg, onPod[o])
				}
				if want := render.Subset(wantCfg, onPod[o]); !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: pod %d\n got %+v\nwant %+v", where, o, got, want)
				}
			}
		}
	}
}

// TestMemoRendersOnlyWhatChanged shows the memory at work: a steady fleet renders nothing again, a changed
// target alone, a changed subscription every target.
func TestMemoRendersOnlyWhatChanged(t *testing.T) {
	w := newWorld(1)
	var m Memo
	render1 := func() {
		if _, _, err := m.Render(selection.Resolve(cluster, w.objects()), w.connections()); err != nil {
			t.Fatal(err)
		}
	}
	versions := func() map[string]uint64 {
		out := map[string]uint64{}
		for name, e := range m.targets {
			out[name] = e.version
		}
		return out
	}
	changed := func(before, after map[string]uint64) []string {
		var out []string
		for name, v := range after {
			if before[name] != v {
				out = append(out, name)
			}
		}
		slices.Sort(out)
		return out
	}
	render1()
	before := versions()
	if len(before) == 0 {
		t.Fatal("no target selected")
	}
	render1()
	if got := changed(before, versions()); len(got) != 0 {
		t.Fatalf("a steady fleet rendered %v again", got)
	}
	var one string
	for name := range before {
		one = name
		break
	}
	c := w.targets[one].DeepCopy()
	c.Generation++
	c.Spec.Address = "10.9.9.9:57400"
	w.targets[one] = c
	render1()
	if got := changed(before, versions()); !slices.Equal(got, []string{one}) {
		t.Fatalf("changing %s rendered %v again", one, got)
	}
	c = w.targets[one].DeepCopy()
	c.Status.ClusterStates = map[string]v1alpha1.TargetClusterState{cluster: {Pod: "c-0"}}
	w.targets[one] = c
	before = versions()
	render1()
	if got := changed(before, versions()); len(got) != 0 {
		t.Fatalf("a status write rendered %v again", got)
	}
	w.setSubscription("s1", "")
	w.subs["s1"].Spec.Paths = []string{"/another"}
	render1()
	if got := changed(before, versions()); len(got) != len(before) {
		t.Fatalf("a changed subscription rendered %d of %d targets again", len(got), len(before))
	}
}

// TestPodKeyFollowsItsTargets: a pod's key stays while its targets' results and the shared part stay, and moves
// when one of them changes.
func TestPodKeyFollowsItsTargets(t *testing.T) {
	w := newWorld(2)
	var m Memo
	sel := selection.Resolve(cluster, w.objects())
	full, _, err := m.Render(sel, w.connections())
	if err != nil {
		t.Fatal(err)
	}
	names := full.TargetNames()
	if len(names) < 2 {
		t.Fatalf("only %d targets render", len(names))
	}
	_, k1 := m.Subset(0, full, names)
	reversed := slices.Clone(names)
	slices.Reverse(reversed)
	_, k2 := m.Subset(0, full, reversed)
	if k1 != k2 {
		t.Fatal("the order of the names moved the key")
	}
	_, k3 := m.Subset(0, full, names[1:])
	if k3 == k1 {
		t.Fatal("a pod holding one target fewer kept its key")
	}
	c := w.targets[names[0]].DeepCopy()
	c.Generation++
	c.Spec.Address = "10.1.1.1:57400"
	w.targets[names[0]] = c
	full, _, err = m.Render(selection.Resolve(cluster, w.objects()), w.connections())
	if err != nil {
		t.Fatal(err)
	}
	if _, k4 := m.Subset(0, full, names); k4 == k1 {
		t.Fatal("a changed target kept its pod's key")
	}
}

func skipTexts(skips []render.SkipError) []string {
	out := make([]string, len(skips))
	for i, s := range skips {
		out[i] = fmt.Sprintf("%s/%s: %v", s.Kind, s.Name, s.Err)
	}
	return out
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// rawJSON splits a JSON object into a spec.config.
func rawJSON(s string) map[string]apiextensionsv1.JSON {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &fields); err != nil {
		panic(err)
	}
	config := make(map[string]apiextensionsv1.JSON, len(fields))
	for k, v := range fields {
		config[k] = apiextensionsv1.JSON{Raw: v}
	}
	return config
}

func TestSameMap(t *testing.T) {
	a := map[string]string{"x": "1"}
	b := map[string]string{"x": "1"}
	c := a
	var none, none2 map[string]string
	for _, tt := range []struct {
		name string
		x, y map[string]string
		want bool
	}{{"one map", a, c, true}, {"equal maps", a, b, false}, {"nil maps", none, none2, true}, {"nil and a map", none, a, false}} {
		if got := sameMap(tt.x, tt.y); got != tt.want {
			t.Errorf("%s: sameMap = %v, want %v", tt.name, got, tt.want)
		}
	}
	if !sameLabels(a, b) || sameLabels(a, map[string]string{"x": "2"}) {
		t.Error("sameLabels does not compare contents")
	}
}

// TestChangedSinceGivesEveryChangeAfterOrNothing: the change log gives, after any number of changes, exactly
// the names of the changes after the one asked for, or says it no longer has them all.
func TestChangedSinceGivesEveryChangeAfterOrNothing(t *testing.T) {
	var m Memo
	var all []string
	for n := 1; n <= 5*changeLog; n++ {
		name := fmt.Sprintf("t%d", n)
		m.noteChange(name)
		all = append(all, name)
		if n%97 != 0 && n != 2*changeLog+1 && n != 5*changeLog {
			continue
		}
		for _, from := range []int{0, n - 1 - changeLog, n - changeLog, n - 3, n - 1, n} {
			if from < 0 {
				continue
			}
			got, ok := m.changedSince(uint64(from))
			if !ok {
				if n-from <= changeLog {
					t.Fatalf("after %d changes: the last %d are not in the log", n, n-from)
				}
				continue
			}
			if !slices.Equal(got, all[from:]) {
				t.Fatalf("after %d changes, since %d: got %d names from %v, want %d from %v", n, from, len(got),
					got[:min(1, len(got))], n-from, all[from:min(from+1, n)])
			}
		}
	}
	if _, ok := m.changedSince(uint64(5*changeLog + 1)); ok {
		t.Fatal("the log gives changes that were not made")
	}
}
