package collector

import (
	"maps"
	"slices"
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

// Runtime is what one collector says it runs: every target it lists in its running state, with that state. A
// collector that could not be read is not Known: nothing is concluded from it. A read is never changed once
// made: NewRuntime works out, once, what the reconciles ask of it every time (Names, AnyStarting).
type Runtime struct {
	Known   bool
	Targets map[string]gnmic.TargetStatus
	// Tunnel are the dial-in devices the collector runs through its gRPC tunnel server, by ID: it was sent
	// none of them, and no apply removes them.
	Tunnel map[string]TunnelTarget
	// names, starting and failed are Names, AnyStarting and FailedNames, when summarized.
	names      []string
	starting   bool
	failed     []string
	summarized bool
	// compared remembers ListsExactly's last answers (NewRuntime's reads only).
	compared *comparedLists
}

// NewRuntime is a collector's read that listed these targets and dial-in devices.
func NewRuntime(targets map[string]gnmic.TargetStatus, tunnel map[string]TunnelTarget) Runtime {
	rt := Runtime{Known: true, Targets: targets, Tunnel: tunnel}
	rt.names, rt.starting, rt.failed, rt.summarized = rt.Names(), rt.AnyStarting(), rt.FailedNames(), true
	rt.compared = &comparedLists{}
	return rt
}

// SameRead tells whether rt and o are reads that said the same: both made, the same targets in the same states,
// the same dial-in devices. A reader keeps the earlier of two such reads, so that what was worked out of it
// (its summaries, what was compared with it, status keys) still stands.
func (rt Runtime) SameRead(o Runtime) bool {
	if !rt.Known || !o.Known || len(rt.Targets) != len(o.Targets) || len(rt.Tunnel) != len(o.Tunnel) {
		return false
	}
	for name, st := range rt.Targets {
		if other, ok := o.Targets[name]; !ok || !st.Equal(other) {
			return false
		}
	}
	for id, t := range rt.Tunnel {
		if other, ok := o.Tunnel[id]; !ok || t.Type != other.Type || !t.Status.Equal(other.Status) {
			return false
		}
	}
	return true
}

// ListsExactly tells whether the collector was read and lists exactly these targets; names must be sorted, and
// must never change once given (the reconciler's are a placement's and a step's lists, both read-only).
//
// A collector's names are decoded from its answer, so comparing them with the Targets' names compares every
// byte; the same lists are compared again at every reconcile until the next read, so a read remembers its
// answers for the last two lists, by identity (the same slice: same first element and length). Forgetting
// rule: a third list takes the place of the one compared longest ago.
func (rt Runtime) ListsExactly(names []string) bool {
	if !rt.Known {
		return false
	}
	if rt.compared == nil {
		return slices.Equal(names, rt.Names())
	}
	return rt.compared.equal(names, rt.Names())
}

// comparedLists are the last two lists a read was compared with, and the answers. The lists are kept, so that
// their memory, and its address, is not reused while they are remembered.
type comparedLists struct {
	mu      sync.Mutex
	lists   [2][]string
	answers [2]bool
	next    int
}

func (c *comparedLists) equal(names, read []string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, l := range c.lists {
		if l != nil && len(l) == len(names) && (len(l) == 0 || &l[0] == &names[0]) {
			return c.answers[i]
		}
	}
	eq := slices.Equal(names, read)
	if names != nil {
		c.lists[c.next], c.answers[c.next] = names, eq
		c.next = 1 - c.next
	}
	return eq
}

// Names are the names of the targets the collector lists, sorted. The slice is shared: read it only.
func (rt Runtime) Names() []string {
	if rt.summarized {
		return rt.names
	}
	return slices.Sorted(maps.Keys(rt.Targets))
}

// AnyStarting tells whether a target the collector lists is starting, or has no state yet.
func (rt Runtime) AnyStarting() bool {
	if rt.summarized {
		return rt.starting
	}
	for _, st := range rt.Targets {
		if st.State == gnmic.StateStarting || st.State == "" {
			return true
		}
	}
	return false
}

// FailedNames are the names of the targets the collector lists as failed, sorted. The slice is shared: read it
// only.
func (rt Runtime) FailedNames() []string {
	if rt.summarized {
		return rt.failed
	}
	var failed []string
	for name, st := range rt.Targets {
		if st.Failed() {
			failed = append(failed, name)
		}
	}
	slices.Sort(failed)
	return failed
}

// TunnelTarget is a dial-in device a collector runs: the type it registered with, and its state.
type TunnelTarget struct {
	Type   string
	Status gnmic.TargetStatus
}

// Ledger is the operator's memory of what each collector acknowledged: the whole configuration of its last
// successful apply, so that the next apply can change only what a batch allows and keep every other target
// exactly as it was sent; and of what it last reported running, which still counts as held when the collector
// cannot be read.
//
// Its one staleness rule: an entry speaks for one collector process only, the pod's UID and its container's
// restart count. A recreated pod or a restarted container starts gNMIc with its bootstrap configuration alone,
// so an entry recorded for an earlier process says nothing about it. Entries are keyed by pod slot
// (namespace/name), which keeps the ledger bounded by the fleet's size; ForgetCluster drops a Cluster's.
type Ledger struct {
	entries sync.Map // pod slot -> Entry
}

// Entry is what the ledger knows of one collector process.
type Entry struct {
	uid      types.UID
	restarts int32
	// acked is true once the collector acknowledged Config, whose fingerprint is Hash.
	acked  bool
	Config gnmic.Config
	Hash   string
	// names are Config's target names, sorted (TargetNames).
	names []string
	// running are the targets the collector last reported, sorted.
	running []string
	// Read is the collector's last answer to "which targets do you run", received at ReadAt.
	Read   Runtime
	ReadAt time.Time
	// settled is what Settled tells, worked out whenever the acknowledged configuration or the read changes.
	settled bool
	// api is what the collector's answers said of its API (api_levels.go).
	api apiKnowledge
}

// TargetNames are the names of the targets of the acknowledged configuration, sorted: Config.TargetNames, made
// once per acknowledgement. The slice is shared: read it only.
func (e Entry) TargetNames() []string { return e.names }

// Entry is what the ledger knows of the pod's current collector process.
func (l *Ledger) Entry(pod *corev1.Pod) Entry {
	fresh := Entry{uid: pod.UID, restarts: workload.CollectorRestarts(pod)}
	v, ok := l.entries.Load(slot(pod))
	if !ok {
		return fresh
	}
	e := v.(Entry)
	if e.uid != fresh.uid || e.restarts != fresh.restarts {
		return fresh
	}
	return e
}

// Acknowledged is the configuration the pod's current collector process acknowledged, if the ledger knows it.
func (l *Ledger) Acknowledged(pod *corev1.Pod) (Entry, bool) {
	e := l.Entry(pod)
	return e, e.acked
}

// Record notes that the pod's collector acknowledged cfg, whose fingerprint is hash.
func (l *Ledger) Record(pod *corev1.Pod, cfg gnmic.Config, hash string) {
	e := l.Entry(pod)
	e.acked, e.Config, e.Hash, e.names = true, cfg, hash, cfg.TargetNames()
	e.settled = e.worksOffNothing()
	l.entries.Store(slot(pod), e)
}

// NoteRead records the pod's collector's answer read at at: the targets it runs, with their states.
func (l *Ledger) NoteRead(pod *corev1.Pod, rt Runtime, at time.Time) {
	e := l.Entry(pod)
	e.running = rt.Names()
	e.Read, e.ReadAt = rt, at
	e.settled = e.worksOffNothing()
	l.entries.Store(slot(pod), e)
}

// Settled tells whether the collector, as last read, runs exactly what it acknowledged and has no target still
// starting: nothing it was sent is left for it to act on. It is worked out once per acknowledgement and per read.
func (e Entry) Settled() bool { return e.settled }

// worksOffNothing is what Settled tells of the entry as it is.
func (e Entry) worksOffNothing() bool {
	return e.acked && e.Read.Known && len(e.Read.Targets) == len(e.Config.Targets) &&
		slices.Equal(e.Read.Names(), e.names) && !e.Read.AnyStarting()
}

// LastRunning is what the pod's collector reported running last, together with what it was sent: what it may
// still run when it cannot be read.
func (l *Ledger) LastRunning(pod *corev1.Pod) []string {
	e := l.Entry(pod)
	out := append([]string(nil), e.running...)
	if e.acked {
		out = append(out, e.Config.TargetNames()...)
	}
	return out
}

// ForgetCluster drops the entries of the Cluster's pods.
func (l *Ledger) ForgetCluster(key types.NamespacedName) {
	cluster := &operatorv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	l.entries.Range(func(k, _ any) bool {
		ns, pod, _ := strings.Cut(k.(string), "/")
		if _, ours := workload.PodOrdinal(cluster, pod); ns == key.Namespace && ours {
			l.entries.Delete(k)
		}
		return true
	})
}

// slot names a pod slot (not its UID), so that what is remembered stays bounded by the fleet's size.
func slot(pod *corev1.Pod) string { return pod.Namespace + "/" + pod.Name }
