package collector_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gnmic-operator/gnmic-operator/controllers/collector"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
)

func collectorPod(uid string, restarts int32) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c-0", UID: types.UID("uid-" + uid)},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "gnmic", RestartCount: restarts}}}}
}

func TestLedgerAsksACollectorProcessAboutItsAPIOnceWhenItHasEverything(t *testing.T) {
	l := &collector.Ledger{}
	pod, now := collectorPod("a", 0), time.Now()
	if !l.APIDue(pod, now) {
		t.Fatal("a collector never asked is not due")
	}
	newest, _ := gnmic.ParseRelease("0.47.0")
	l.NoteAPI(pod, gnmic.APILevel{AnswersAs: newest}, now)
	if l.APIDue(pod, now.Add(time.Hour)) || !l.NextAPICheck(pod).IsZero() {
		t.Error("a collector that has every feature is asked again")
	}
	if !l.APIDue(collectorPod("a", 1), now) {
		t.Error("a restarted container is a new collector process, not asked yet")
	}
	if !l.APIDue(collectorPod("b", 0), now) {
		t.Error("a recreated pod is a new collector process, not asked yet")
	}
}

func TestLedgerAsksACollectorThatLacksAFeatureAgainAfterADoublingWait(t *testing.T) {
	l := &collector.Ledger{}
	pod, at := collectorPod("a", 0), time.Unix(1_000_000, 0)
	old := gnmic.TooOldForApply("POST /api/v1/config/apply answered 404")
	var waits []time.Duration
	for range 7 {
		l.NoteAPI(pod, old, at)
		next := l.NextAPICheck(pod)
		if l.APIDue(pod, next.Add(-time.Second)) || !l.APIDue(pod, next) {
			t.Fatalf("due before %v or not at it", next)
		}
		waits = append(waits, next.Sub(at))
		at = next
	}
	want := []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 16 * time.Minute,
		16 * time.Minute, 16 * time.Minute}
	for i := range want {
		if waits[i] != want[i] {
			t.Fatalf("waits = %v, want %v", waits, want)
		}
	}
	if level, known := l.API(pod); !known || level.Has(gnmic.FeatureConfigApply) {
		t.Errorf("API = %v, %v", level, known)
	}
}
