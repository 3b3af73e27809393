package fleetmemo

import (
	"fmt"
	"maps"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// BenchmarkSelectRenderOneChange is the fleet memory's part of a reconcile after one Target of 50,000 was
// written, the list brought up to date in place as the reconciler's is (refreshTargets): Select, Recorded and
// Render. A spec change keeps the Target's picks; a label change picks it again.
func BenchmarkSelectRenderOneChange(b *testing.B) {
	for _, change := range []string{"spec", "labels"} {
		b.Run(change, func(b *testing.B) {
			w := newWorld(1)
			w.setProfile("p3", "creds1", "") // every target renders
			clear(w.targets)
			for i := range 50_000 {
				w.addTarget(fmt.Sprintf("t%05d", i))
			}
			objects := w.objects()
			conn := w.connections()
			c := &v1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}
			var m Memo
			sel := m.Select(cluster, objects, false)
			m.Recorded(c)
			if _, _, err := m.Render(sel, conn); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				k := i % len(objects.Targets)
				t := objects.Targets[k]
				t.ResourceVersion = w.rv()
				if change == "spec" {
					t.Generation++
					t.Spec.Tags = map[string]string{"revision": fmt.Sprint(i)}
				} else {
					labels := maps.Clone(t.Labels)
					labels["changed"] = fmt.Sprint(i)
					t.Labels = labels
				}
				objects.Targets[k] = t
				sel := m.Select(cluster, objects, false)
				m.Recorded(c)
				if _, _, err := m.Render(sel, conn); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
