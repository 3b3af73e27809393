package targetsource_test

import (
	"fmt"
	"strconv"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/fakenetbox"
)

// newNetBoxSource makes a TargetSource of the netbox preset over the server's devices, 500 per page, with
// its token Secret; change adjusts it before it is created. Its interval is long: the specs sync it by
// requestSync.
func newNetBoxSource(ns string, s *fakenetbox.Server, token string, change func(*operatorv1alpha1.TargetSource)) *operatorv1alpha1.TargetSource {
	Expect(k8sClient.Create(suiteCtx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "netbox-token"},
		Data: map[string][]byte{"token": []byte(token + "\n")}})).To(Succeed())
	ts := &operatorv1alpha1.TargetSource{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "netbox"},
		Spec: operatorv1alpha1.TargetSourceSpec{
			HTTP: &operatorv1alpha1.HTTPInventory{
				URL:      s.DevicesURL(500),
				Auth:     &operatorv1alpha1.HTTPAuth{Token: &operatorv1alpha1.HTTPTokenAuth{Scheme: "Token", SecretKeyRef: operatorv1alpha1.SecretKeyReference{Name: "netbox-token", Key: "token"}}},
				Interval: &metav1.Duration{Duration: time.Hour},
			},
			Mapping: operatorv1alpha1.TargetMapping{Preset: operatorv1alpha1.MappingPresetNetBox,
				Defaults: operatorv1alpha1.TargetDefaults{Profile: "routers", Labels: map[string]string{"source": "netbox"}}},
			Sync: operatorv1alpha1.TargetSync{DeleteAfterMisses: 3, MinRecordsPercent: ptr.To[int32](50), BatchSize: 200},
		},
	}
	if change != nil {
		change(ts)
	}
	Expect(k8sClient.Create(suiteCtx, ts)).To(Succeed())
	return ts
}

// source reads the TargetSource.
func source(g Gomega, ts *operatorv1alpha1.TargetSource) *operatorv1alpha1.TargetSource {
	var got operatorv1alpha1.TargetSource
	g.Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(ts), &got)).To(Succeed())
	return &got
}

var syncRequests int

// requestSync asks for a sync through the annotation and waits until a sync answered it; it returns the
// TargetSource after that sync.
func requestSync(ts *operatorv1alpha1.TargetSource) *operatorv1alpha1.TargetSource {
	value := askForSync(ts)
	var after *operatorv1alpha1.TargetSource
	Eventually(func(g Gomega) {
		after = source(g, ts)
		g.Expect(after.Status.LastSyncRequest).To(Equal(value))
	}, 2*time.Minute, 50*time.Millisecond).Should(Succeed())
	return after
}

// askForSync sets the annotation that asks for a sync, as kubectl annotate does (a merge patch of the annotation
// alone), and returns its value, which status.lastSyncRequest shows once a sync answered it.
func askForSync(ts *operatorv1alpha1.TargetSource) string {
	syncRequests++
	value := strconv.Itoa(syncRequests)
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, operatorv1alpha1.SyncRequestedAnnotation, value)
	Expect(k8sClient.Patch(suiteCtx, source(Default, ts), client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
	return value
}

// recordSyncing writes status.syncing as a replica does when it starts a sync.
func recordSyncing(ts *operatorv1alpha1.TargetSource, member string, since time.Time) {
	Eventually(func(g Gomega) {
		cur := source(g, ts)
		cur.Status.Syncing = &operatorv1alpha1.TargetSourceSyncing{Member: member, Since: metav1.NewTime(since)}
		g.Expect(k8sClient.Status().Update(suiteCtx, cur)).To(Succeed())
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
}

// waitForSyncs waits until status.syncs reaches n.
func waitForSyncs(ts *operatorv1alpha1.TargetSource, n int64) *operatorv1alpha1.TargetSource {
	var after *operatorv1alpha1.TargetSource
	Eventually(func(g Gomega) {
		after = source(g, ts)
		g.Expect(after.Status.Syncs).To(BeNumerically(">=", n))
	}, 3*time.Minute, 50*time.Millisecond).Should(Succeed())
	return after
}

// targets are the Targets of the namespace by name.
func targets(ns string) map[string]operatorv1alpha1.Target {
	var list operatorv1alpha1.TargetList
	Expect(k8sClient.List(suiteCtx, &list, client.InNamespace(ns))).To(Succeed())
	out := map[string]operatorv1alpha1.Target{}
	for _, t := range list.Items {
		out[t.Name] = t
	}
	return out
}

func condition(ts *operatorv1alpha1.TargetSource, typ string) metav1.Condition {
	c := meta.FindStatusCondition(ts.Status.Conditions, typ)
	if c == nil {
		return metav1.Condition{Type: typ, Status: "absent"}
	}
	return *c
}

// eventsOf are the reasons and messages of the Events about the TargetSource.
func eventsOf(ts *operatorv1alpha1.TargetSource) func(Gomega) []string {
	return func(g Gomega) []string {
		var list corev1.EventList
		g.Expect(k8sClient.List(suiteCtx, &list, client.InNamespace(ts.Namespace))).To(Succeed())
		var out []string
		for _, e := range list.Items {
			if e.InvolvedObject.Kind == "TargetSource" && e.InvolvedObject.Name == ts.Name {
				out = append(out, e.Reason+": "+e.Message)
			}
		}
		return out
	}
}

// deviceName is the Target name of a fakenetbox device.
func deviceName(id int) string { return fmt.Sprintf("dev-%05d", id) }

// ids are the whole numbers from first to last.
func ids(first, last int) []int {
	var out []int
	for id := first; id <= last; id++ {
		out = append(out, id)
	}
	return out
}

// writesSince are the writes of Targets in the namespace a replica sent since before.
func writesSince(r *replica, ns string, before map[string]int) map[string]int {
	now := r.writes.of(ns)
	out := map[string]int{}
	for verb, n := range now {
		if d := n - before[verb]; d != 0 {
			out[verb] = d
		}
	}
	return out
}
