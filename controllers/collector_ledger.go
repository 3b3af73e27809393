package controllers

import (
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

// collectorLedger is the operator's memory of what each collector acknowledged: the whole configuration of
// its last successful apply, so that the next apply can change only what a batch allows and keep every other
// target exactly as it was sent.
//
// Its one staleness rule: an entry speaks for one collector process only, the pod's UID and its container's
// restart count. A recreated pod or a restarted container starts gNMIc with its bootstrap configuration alone,
// so an entry recorded for an earlier process says nothing about it. Entries are keyed by pod slot
// (namespace/name), which keeps the ledger bounded by the fleet's size.
type collectorLedger struct {
	entries sync.Map // pod slot -> ledgerEntry
}

type ledgerEntry struct {
	uid      types.UID
	restarts int32
	config   gnmic.Config
	hash     string
}

// sent is the configuration the pod's current collector process acknowledged, if the ledger knows it.
func (l *collectorLedger) sent(pod *corev1.Pod) (ledgerEntry, bool) {
	v, ok := l.entries.Load(ackedKey(pod))
	if !ok {
		return ledgerEntry{}, false
	}
	e := v.(ledgerEntry)
	if e.uid != pod.UID || e.restarts != containerRestarts(pod) {
		return ledgerEntry{}, false
	}
	return e, true
}

// record notes that the pod's collector acknowledged cfg.
func (l *collectorLedger) record(pod *corev1.Pod, cfg gnmic.Config, hash string) {
	l.entries.Store(ackedKey(pod), ledgerEntry{uid: pod.UID, restarts: containerRestarts(pod), config: cfg, hash: hash})
}

// forgetCluster drops the entries of a deleted Cluster's pods.
func (l *collectorLedger) forgetCluster(namespace, name string) {
	cluster := &operatorv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	l.entries.Range(func(k, _ any) bool {
		ns, pod, _ := strings.Cut(k.(string), "/")
		if _, ours := workload.PodOrdinal(cluster, pod); ns == namespace && ours {
			l.entries.Delete(k)
		}
		return true
	})
}
