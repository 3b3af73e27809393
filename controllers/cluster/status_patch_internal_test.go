package cluster

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

func TestTargetStatePatchCarriesWhatChangesOnly(t *testing.T) {
	collecting := operatorv1alpha1.TargetClusterState{Pod: "c-0", State: operatorv1alpha1.TargetAssigned,
		ConnectionState: "READY", Collecting: true}
	pending := operatorv1alpha1.TargetClusterState{Pod: "c-1", LastPod: "c-0", State: operatorv1alpha1.TargetPending,
		Message: notStartedYet, Weight: 3, WeightSource: operatorv1alpha1.WeightSourceDeclared}
	unassigned := operatorv1alpha1.TargetClusterState{State: operatorv1alpha1.TargetUnassigned, Message: "every collector pod is at capacity"}
	for _, tc := range []struct {
		name    string
		listed  map[string]operatorv1alpha1.TargetClusterState
		cluster string
		state   *operatorv1alpha1.TargetClusterState
		want    string
	}{
		{"a first entry, with the columns it sets", nil, "a", &collecting,
			`{"metadata":{"resourceVersion":"7"},"status":{"clusterStates":{"a":{"collecting":true,"connectionState":"READY","pod":"c-0","state":"Assigned"}},"clusters":1,"state":"Assigned"}}`},
		{"fields that go empty are sent as null, those that keep their value not at all",
			map[string]operatorv1alpha1.TargetClusterState{"a": pending}, "a", &collecting,
			`{"metadata":{"resourceVersion":"7"},"status":{"clusterStates":{"a":{"collecting":true,"connectionState":"READY","lastPod":null,"message":null,"pod":"c-0","state":"Assigned","weight":null,"weightSource":null}},"clusters":1,"state":"Assigned"}}`},
		{"another Cluster's entry is not sent, and the columns follow both entries",
			map[string]operatorv1alpha1.TargetClusterState{"a": collecting, "b": unassigned}, "a", &pending,
			`{"metadata":{"resourceVersion":"7"},"status":{"clusterStates":{"a":{"collecting":null,"connectionState":null,"lastPod":"c-0","message":"not started by its collector yet","pod":"c-1","state":"Pending","weight":3,"weightSource":"Declared"}},"clusters":null}}`},
		{"an entry removed while another stays",
			map[string]operatorv1alpha1.TargetClusterState{"a": collecting, "b": unassigned}, "a", nil,
			`{"metadata":{"resourceVersion":"7"},"status":{"clusterStates":{"a":null},"clusters":null}}`},
		{"an entry removed while another stays, which sets the state",
			map[string]operatorv1alpha1.TargetClusterState{"a": unassigned, "b": pending}, "a", nil,
			`{"metadata":{"resourceVersion":"7"},"status":{"clusterStates":{"a":null},"state":"Pending"}}`},
		{"the last entry removed takes the map and the columns with it",
			map[string]operatorv1alpha1.TargetClusterState{"a": collecting}, "a", nil,
			`{"metadata":{"resourceVersion":"7"},"status":{"clusterStates":null,"clusters":null,"state":null}}`},
		{"an entry that is not there is not removed",
			map[string]operatorv1alpha1.TargetClusterState{"b": unassigned}, "a", nil,
			`{"metadata":{"resourceVersion":"7"}}`},
		{"an entry written as it is: the lock only",
			map[string]operatorv1alpha1.TargetClusterState{"a": collecting}, "a", &collecting,
			`{"metadata":{"resourceVersion":"7"},"status":{"clusterStates":{"a":{}}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			listed := target(tc.listed)
			got, err := targetStatePatch(listed, tc.cluster, tc.state)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("patch\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// The patch of what changes leaves the Target as the patch of the whole Target did (a diff of its JSON before and
// after the write): for every field of an entry set, changed or gone, with or without another Cluster's entry.
func TestTargetStatePatchWritesWhatAWholeTargetPatchWrote(t *testing.T) {
	full := operatorv1alpha1.TargetClusterState{Pod: "c-1", LastPod: "c-0", State: operatorv1alpha1.TargetPending,
		Weight: 3, WeightSource: operatorv1alpha1.WeightSourceMeasured, ResponseRate: "12.5", ConnectionState: "CONNECTING",
		Collecting: true, Message: "m", LastUpdated: metav1.NewTime(time.Unix(1_700_000_000, 0))}
	other := operatorv1alpha1.TargetClusterState{Pod: "c-2", LastPod: "c-3", State: operatorv1alpha1.TargetAssigned,
		Weight: 4, WeightSource: operatorv1alpha1.WeightSourceDeclared, ResponseRate: "1", ConnectionState: "READY",
		Collecting: false, Message: "n", LastUpdated: metav1.NewTime(time.Unix(1_700_000_060, 0))}
	states := []*operatorv1alpha1.TargetClusterState{nil, {}, &full, &other}
	v := reflect.ValueOf(full)
	for _, f := range entryFields {
		if v.Field(f.index).IsZero() {
			t.Fatalf("the test's full entry leaves %s empty: set it", f.name)
		}
		without := full
		reflect.ValueOf(&without).Elem().Field(f.index).SetZero()
		states = append(states, &without)
	}
	if len(entryFields) != v.NumField() {
		t.Fatalf("%d fields of %d have a JSON name", len(entryFields), v.NumField())
	}
	neighbours := []map[string]operatorv1alpha1.TargetClusterState{nil, {"b": {State: operatorv1alpha1.TargetUnassigned}}}
	for _, neighbour := range neighbours {
		for _, before := range states {
			for _, after := range states {
				if before == nil && after == nil {
					continue
				}
				name := fmt.Sprintf("%d neighbours, %v to %v", len(neighbour), before, after)
				listed := target(neighbour)
				if before != nil {
					listed.Status.ClusterStates = map[string]operatorv1alpha1.TargetClusterState{"a": *before}
					for k, st := range neighbour {
						listed.Status.ClusterStates[k] = st
					}
					listed.Status.Clusters, listed.Status.State = summarize(listed.Status.ClusterStates)
				}
				patch, err := targetStatePatch(listed, "a", after)
				if err != nil {
					t.Fatal(err)
				}
				got, want := applied(t, listed, patch), applied(t, listed, wholeTargetPatch(t, listed, "a", after))
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: the patch %s leaves\n%v\nwhere the whole Target's left\n%v", name, patch, got, want)
				}
				if after == nil && before != nil {
					status, _ := got["status"].(map[string]any)
					states, _ := status["clusterStates"].(map[string]any)
					if _, still := states["a"]; still {
						t.Errorf("%s: the entry is still there: %v", name, got)
					}
				}
			}
		}
	}
}

// target is a Target as a cache lists it, with the entries given and the columns they make.
func target(states map[string]operatorv1alpha1.TargetClusterState) *operatorv1alpha1.Target {
	t := &operatorv1alpha1.Target{
		ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "router-0001", ResourceVersion: "7", UID: "u-1",
			Labels: map[string]string{"site": "par1", "role": "edge"}},
		Spec: operatorv1alpha1.TargetSpec{Address: "10.0.0.1:57400", Profile: "default", Tags: map[string]string{"vendor": "nokia"}},
	}
	t.Status.ClusterStates = states
	t.Status.Clusters, t.Status.State = summarize(states)
	return t
}

// wholeTargetPatch is the patch patchTargetState made before: the merge diff of the Target's JSON before and
// after its entry was set, with its resourceVersion.
func wholeTargetPatch(tb testing.TB, listed *operatorv1alpha1.Target, cluster string, state *operatorv1alpha1.TargetClusterState) []byte {
	tb.Helper()
	t := listed.DeepCopy()
	if state == nil {
		delete(t.Status.ClusterStates, cluster)
	} else {
		if t.Status.ClusterStates == nil {
			t.Status.ClusterStates = map[string]operatorv1alpha1.TargetClusterState{}
		}
		t.Status.ClusterStates[cluster] = *state
	}
	t.Status.Clusters, t.Status.State = summarize(t.Status.ClusterStates)
	data, err := client.MergeFromWithOptions(listed, client.MergeFromWithOptimisticLock{}).Data(t)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// applied is the Target's JSON with the merge patch applied (RFC 7386), and without null fields, which the API
// server prunes.
func applied(t *testing.T, listed *operatorv1alpha1.Target, patch []byte) map[string]any {
	t.Helper()
	var doc, p any
	data, err := json.Marshal(listed)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(patch, &p); err != nil {
		t.Fatal(err)
	}
	out, _ := withoutNulls(mergePatch(doc, p)).(map[string]any)
	return out
}

func mergePatch(doc, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	d, ok := doc.(map[string]any)
	if !ok {
		d = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(d, k)
		} else {
			d[k] = mergePatch(d[k], v)
		}
	}
	return d
}

func withoutNulls(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	for k, e := range m {
		if e == nil {
			delete(m, k)
		} else {
			m[k] = withoutNulls(e)
		}
	}
	return m
}

// A bulk arrival's status write: a new Target, as the manager's cache lists it (with its managed fields), gets
// its first entry. "whole-target" is the patch patchTargetState built before (a copy of the Target, both
// encoded, diffed), "changes" the one it builds now.
func BenchmarkTargetStatePatch(b *testing.B) {
	listed := target(nil)
	listed.ManagedFields = []metav1.ManagedFieldsEntry{
		{Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "operator.gnmic.dev/v1alpha1",
			Time: ptrTime(time.Unix(1_700_000_000, 0)), FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(
				`{"f:metadata":{"f:labels":{".":{},"f:role":{},"f:site":{}}},"f:spec":{".":{},"f:address":{},"f:profile":{},"f:tags":{".":{},"f:vendor":{}}}}`)}},
		{Manager: "gnmic-operator", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "operator.gnmic.dev/v1alpha1",
			Time: ptrTime(time.Unix(1_700_000_010, 0)), FieldsType: "FieldsV1", Subresource: "status", FieldsV1: &metav1.FieldsV1{Raw: []byte(
				`{"f:status":{".":{},"f:clusterStates":{".":{},"f:other":{".":{},"f:lastUpdated":{},"f:message":{},"f:state":{}}},"f:state":{}}}`)}},
	}
	state := &operatorv1alpha1.TargetClusterState{Pod: "telemetry-3", State: operatorv1alpha1.TargetAssigned, ConnectionState: "READY",
		Collecting: true, LastUpdated: metav1.NewTime(time.Unix(1_700_000_020, 0))}
	b.Run("whole-target", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			wholeTargetPatch(b, listed, "telemetry", state)
		}
	})
	b.Run("changes", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := targetStatePatch(listed, "telemetry", state); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func ptrTime(t time.Time) *metav1.Time {
	mt := metav1.NewTime(t)
	return &mt
}
