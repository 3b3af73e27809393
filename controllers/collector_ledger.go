package controllers

import (
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

// collectorLedger is the operator's memory of what each collector acknowledged: the whole configuration of
// its last successful apply, so that the next apply can change only what a batch allows and keep every other
// target exactly as it was sent; and of what it last reported running, which still counts as held when the
// collector cannot be read.
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
	// acked is true once the collector acknowledged config (hash).
	acked   bool
	config  gnmic.Config
	hash    string
	running []string
	// read is the collector's last answer to "which targets do you run", received at readAt.
	read   collectorRuntime
	readAt time.Time
}

// entry is what the ledger knows of the pod's current collector process.
func (l *collectorLedger) entry(pod *corev1.Pod) ledgerEntry {
	v, ok := l.entries.Load(ackedKey(pod))
	if !ok {
		return ledgerEntry{uid: pod.UID, restarts: containerRestarts(pod)}
	}
	e := v.(ledgerEntry)
	if e.uid != pod.UID || e.restarts != containerRestarts(pod) {
		return ledgerEntry{uid: pod.UID, restarts: containerRestarts(pod)}
	}
	return e
}

// sent is the configuration the pod's current collector process acknowledged, if the ledger knows it.
func (l *collectorLedger) sent(pod *corev1.Pod) (ledgerEntry, bool) {
	e := l.entry(pod)
	return e, e.acked
}

// record notes that the pod's collector acknowledged cfg.
func (l *collectorLedger) record(pod *corev1.Pod, cfg gnmic.Config, hash string) {
	e := l.entry(pod)
	e.acked, e.config, e.hash = true, cfg, hash
	l.entries.Store(ackedKey(pod), e)
}

// noteRead records the pod's collector's answer read at at: the targets it runs, with their states.
func (l *collectorLedger) noteRead(pod *corev1.Pod, rt collectorRuntime, at time.Time) {
	e := l.entry(pod)
	e.running = make([]string, 0, len(rt.targets))
	for name := range rt.targets {
		e.running = append(e.running, name)
	}
	sort.Strings(e.running)
	e.read, e.readAt = rt, at
	l.entries.Store(ackedKey(pod), e)
}

// settled tells whether the collector, as last read, runs exactly what it acknowledged and has no target still
// starting: nothing it was sent is left for it to act on.
func (e ledgerEntry) settled() bool {
	if !e.acked || !e.read.known || len(e.read.targets) != len(e.config.Targets) {
		return false
	}
	for name, st := range e.read.targets {
		if _, sent := e.config.Targets[name]; !sent || st.State == gnmic.StateStarting || st.State == "" {
			return false
		}
	}
	return true
}

// lastRunning is what the pod's collector reported running last, together with what it was sent: what it may
// still run when it cannot be read.
func (l *collectorLedger) lastRunning(pod *corev1.Pod) []string {
	e := l.entry(pod)
	out := append([]string(nil), e.running...)
	if e.acked {
		out = append(out, sortedTargetNames(e.config)...)
	}
	return out
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
