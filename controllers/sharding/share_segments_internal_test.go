package sharding

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

func TestPlanClusterObjectCachesListsOnlyWhatTheShareGains(t *testing.T) {
	segment := func(keys ...string) *shareCache { return &shareCache{keys: keys} }
	ab, c, d := segment("n/a", "n/b"), segment("m/c"), segment("n/d")
	many := make([]*shareCache, maxShareSegments)
	for i := range many {
		many[i] = segment("s/" + string(rune('a'+i)))
	}
	manyKeys := func(extra ...string) []string {
		var keys []string
		for _, m := range many {
			keys = append(keys, m.keys...)
		}
		keys = append(keys, extra...)
		slices.Sort(keys)
		return keys
	}
	for _, tc := range []struct {
		name                       string
		want                       []string
		segments, pending          []*shareCache
		consolidating, consolidate bool
		stop, replaces             []*shareCache
		build                      []string
	}{
		{name: "a first share: one cache of it", want: []string{"n/a", "n/b"}, build: []string{"n/a", "n/b"}},
		{name: "unchanged", want: []string{"m/c", "n/a", "n/b"}, segments: []*shareCache{ab}, pending: []*shareCache{c}},
		{name: "gained Clusters: a segment of them only", want: []string{"m/c", "n/a", "n/b", "n/e"},
			segments: []*shareCache{ab, c}, build: []string{"n/e"}},
		{name: "a Cluster left: its segment kept while another of it is wanted", want: []string{"n/b"},
			segments: []*shareCache{ab, c}, stop: []*shareCache{c}},
		{name: "a Cluster that left and came back: still held", want: []string{"n/a", "n/d"},
			segments: []*shareCache{ab, d}},
		{name: "every Cluster left", segments: []*shareCache{ab}, pending: []*shareCache{c}, stop: []*shareCache{ab, c}},
		{name: "quiet: one cache of the whole share replaces the segments", want: []string{"m/c", "n/b"},
			segments: []*shareCache{ab, c}, consolidate: true, build: []string{"m/c", "n/b"}, replaces: []*shareCache{ab, c}},
		{name: "as many segments as a share holds: a gain builds the whole share", want: manyKeys("z/z"),
			segments: many, build: manyKeys("z/z"), replaces: many},
		{name: "as many segments, but a consolidation is under way: a segment", want: manyKeys("z/z"),
			segments: many[1:], pending: many[:1], consolidating: true, build: []string{"z/z"}},
		{name: "as many segments and nothing gained: nothing built", want: manyKeys(), segments: many},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := planClusterObjectCaches(tc.want, tc.segments, tc.pending, tc.consolidating, tc.consolidate)
			if !slices.Equal(plan.build, tc.build) {
				t.Errorf("build %v, want %v", plan.build, tc.build)
			}
			if !slices.Equal(plan.stop, tc.stop) {
				t.Errorf("stop %v, want %v", plan.stop, tc.stop)
			}
			if !slices.Equal(plan.replaces, tc.replaces) {
				t.Errorf("replaces %v, want %v", plan.replaces, tc.replaces)
			}
		})
	}
}

// A share's plan never leaves one of its Clusters without a cache holding it, whatever the order of changes.
func TestPlanClusterObjectCachesAlwaysHoldTheShare(t *testing.T) {
	shares := [][]string{{"n/a"}, {"n/a", "n/b"}, {"n/b", "n/c"}, {"n/a", "n/c", "n/d"}, {}, {"n/d"}, {"n/a", "n/b", "n/c", "n/d", "n/e"}}
	var segments []*shareCache
	consolidating := false
	for round := range 200 {
		want := shares[(round*7+round/3)%len(shares)]
		plan := planClusterObjectCaches(want, segments, nil, consolidating, round%5 == 0)
		segments = slices.DeleteFunc(segments, func(c *shareCache) bool { return slices.Contains(plan.stop, c) })
		if plan.build != nil {
			segments = slices.DeleteFunc(segments, func(c *shareCache) bool { return slices.Contains(plan.replaces, c) })
			segments = append(segments, &shareCache{keys: plan.build})
		}
		for _, key := range want {
			if !slices.ContainsFunc(segments, func(c *shareCache) bool { return slices.Contains(c.keys, key) }) {
				t.Fatalf("round %d: share %v, %s held by no cache", round, want, key)
			}
		}
		if len(segments) > maxShareSegments+1 {
			t.Fatalf("round %d: %d segments", round, len(segments))
		}
	}
}

func TestSegmentReaderReadsEachObjectFromASegmentHoldingItWhole(t *testing.T) {
	pod := func(ns, name, cluster, image string) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{operatorv1alpha1.ClusterLabel: cluster}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Image: image}}}}
	}
	// The older segment holds n/fleet whole and m/fleet by name; the newer one the reverse, and a Cluster both hold.
	older := &shareCache{keys: []string{"n/both", "n/fleet"}, cache: readerCache{reader: store{pods: []corev1.Pod{
		pod("n", "fleet-0", "fleet", "whole"), pod("m", "fleet-0", "fleet", ""), pod("n", "both-0", "both", "whole")}}}}
	newer := &shareCache{keys: []string{"m/fleet", "n/both"}, cache: readerCache{reader: store{pods: []corev1.Pod{
		pod("n", "fleet-0", "fleet", ""), pod("m", "fleet-0", "fleet", "whole"), pod("n", "both-0", "both", "whole")}}}}
	r := segmentReader{older, newer}
	ctx := context.Background()
	for _, key := range []types.NamespacedName{{Namespace: "n", Name: "fleet-0"}, {Namespace: "m", Name: "fleet-0"}, {Namespace: "n", Name: "both-0"}} {
		var got corev1.Pod
		if err := r.Get(ctx, key, &got); err != nil {
			t.Fatalf("Get %s: %v", key, err)
		}
		if got.Spec.Containers[0].Image != "whole" {
			t.Errorf("Get %s: a stub", key)
		}
	}
	var missing corev1.Pod
	if err := r.Get(ctx, types.NamespacedName{Namespace: "n", Name: "gone"}, &missing); !apierrors.IsNotFound(err) {
		t.Errorf("Get of an absent pod: %v, want NotFound", err)
	}
	stubOnly := segmentReader{&shareCache{keys: []string{"n/other"}, cache: older.cache}}
	if err := stubOnly.Get(ctx, types.NamespacedName{Namespace: "m", Name: "fleet-0"}, &missing); !apierrors.IsNotFound(err) {
		t.Errorf("Get of a pod held by name only: %v, want NotFound", err)
	}

	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace("")); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pods.Items {
		if p.Spec.Containers[0].Image != "whole" {
			t.Errorf("List: a stub of %s/%s", p.Namespace, p.Name)
		}
		names = append(names, p.Namespace+"/"+p.Name)
	}
	slices.Sort(names)
	if want := []string{"m/fleet-0", "n/both-0", "n/fleet-0"}; !slices.Equal(names, want) {
		t.Errorf("List: %v, want %v, each once", names, want)
	}
}
