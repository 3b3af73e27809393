package controllers

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/placement"
	"github.com/gnmic-operator/gnmic-operator/internal/render"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

// podPush is what happened to one collector pod's configuration in this reconcile.
type podPush struct {
	pod *corev1.Pod
	// status is the pod's entry for Cluster status.collectors after this reconcile.
	status operatorv1alpha1.CollectorStatus
	// targets the pod holds according to the configuration it acknowledged; nil when it holds none we know of.
	targets map[string]bool
	pushed  bool
	err     error
}

// ackedConfig is the configuration a pod acknowledged, as recorded in memory.
type ackedConfig struct {
	hash   string
	status operatorv1alpha1.CollectorStatus
}

// ackedKey names a pod slot (not its UID), so that what is remembered stays bounded by the fleet's size.
func ackedKey(pod *corev1.Pod) string { return pod.Namespace + "/" + pod.Name }

// pushResults are the outcomes of one reconcile's pushes.
type pushResults struct {
	pods map[int]*podPush
	// skipped are targets (and other objects) left out of every configuration because they do not render.
	skipped []render.SkipError
}

func (p pushResults) failedPods() []string {
	var out []string
	for _, pp := range p.pods {
		if pp.err != nil {
			out = append(out, pp.pod.Name)
		}
	}
	sort.Strings(out)
	return out
}

// push gives every ready pod its configuration, when it differs from what the pod acknowledged. Pods that
// lose targets are pushed first (break before make): a target moves onto its new pod only once its old pod
// has let it go. When the old pod fails, the target stays with it and the move waits for the retry.
func (r *ClusterReconciler) push(ctx context.Context, cluster *operatorv1alpha1.Cluster, w *world, plan *placementPlan) pushResults {
	previous := map[string]operatorv1alpha1.CollectorStatus{}
	for _, c := range cluster.Status.Collectors {
		previous[c.Pod] = c
	}
	results := pushResults{pods: map[int]*podPush{}}
	for ordinal, pod := range w.pods {
		ready, _ := podReadiness(pod)
		pp := &podPush{pod: pod, status: operatorv1alpha1.CollectorStatus{Pod: pod.Name, Ready: ready}}
		if prev, ok := previous[pod.Name]; ok && prev.UID == string(pod.UID) {
			pp.status = prev
			pp.status.Ready = ready
		}
		results.pods[ordinal] = pp
	}

	losing, incoming := map[int]bool{}, map[int]map[string]bool{}
	for _, m := range plan.result.Moves {
		losing[m.From] = true
		if m.To != placement.NoPod {
			if incoming[m.To] == nil {
				incoming[m.To] = map[string]bool{}
			}
			incoming[m.To][m.Target] = true
		}
	}

	skipped := map[string]render.SkipError{}
	// First every pod that loses targets lets them go, without taking the ones moving in yet.
	for _, ordinal := range plan.availability.Ready {
		pp := results.pods[ordinal]
		if pp == nil || !losing[ordinal] {
			continue
		}
		var staying []string
		for _, name := range plan.onPod[ordinal] {
			if !incoming[ordinal][name] {
				staying = append(staying, name)
			}
		}
		r.pushPod(ctx, cluster, w, staying, pp, skipped)
		if pp.err != nil {
			plan.keepMovesFrom(ordinal)
		}
	}
	// Then every pod gets its final configuration; unchanged ones are not pushed again.
	for _, ordinal := range plan.availability.Ready {
		pp := results.pods[ordinal]
		if pp == nil || pp.err != nil {
			continue
		}
		r.pushPod(ctx, cluster, w, plan.onPod[ordinal], pp, skipped)
	}
	for _, s := range skipped {
		results.skipped = append(results.skipped, s)
	}
	sort.Slice(results.skipped, func(i, j int) bool {
		a, b := results.skipped[i], results.skipped[j]
		return a.Kind < b.Kind || (a.Kind == b.Kind && a.Name < b.Name)
	})
	return results
}

// pushPod renders the configuration of the named targets for one pod and applies it unless the pod already
// acknowledged exactly that configuration.
func (r *ClusterReconciler) pushPod(ctx context.Context, cluster *operatorv1alpha1.Cluster, w *world, targets []string,
	pp *podPush, skipped map[string]render.SkipError) {
	logger := log.FromContext(ctx).WithValues("pod", pp.pod.Name)
	names := append([]string(nil), targets...)
	sort.Strings(names)
	cfg, skips, err := render.PodConfig(w.selection, names, w.conn)
	for _, s := range skips {
		skipped[string(s.Kind)+"/"+s.Name] = s
	}
	if err != nil {
		pp.err = fmt.Errorf("render configuration: %w", err)
		pp.status.Error = pp.err.Error()
		return
	}
	hash, err := cfg.Hash()
	if err != nil {
		pp.err = fmt.Errorf("hash configuration: %w", err)
		pp.status.Error = pp.err.Error()
		return
	}
	pp.targets = make(map[string]bool, len(cfg.Targets))
	for name := range cfg.Targets {
		pp.targets[name] = true
	}
	if acknowledged(pp.status, pp.pod, hash) && pp.status.Error == "" {
		return
	}
	if acked, ok := r.acked.Load(ackedKey(pp.pod)); ok && acknowledged(acked.(ackedConfig).status, pp.pod, hash) {
		// Acknowledged by an earlier reconcile whose status write the cache does not show yet.
		pp.status = acked.(ackedConfig).status
		pp.status.Ready = true
		return
	}

	client, err := r.Dialer.Client(cluster, pp.pod, w.clientTLS())
	if err == nil {
		err = client.Apply(ctx, cfg)
	}
	if err != nil {
		pp.err = fmt.Errorf("push configuration to pod %s: %w", pp.pod.Name, err)
		pp.status.Error = pp.err.Error()
		pp.targets = nil
		logger.Error(err, "push failed")
		return
	}
	now := metav1.NewTime(r.now())
	pp.pushed = true
	pp.status = operatorv1alpha1.CollectorStatus{
		Pod: pp.pod.Name, UID: string(pp.pod.UID), Restarts: containerRestarts(pp.pod), Ready: true,
		Targets: int32(len(cfg.Targets)), ConfigHash: hash, LastApplied: &now,
	}
	r.acked.Store(ackedKey(pp.pod), ackedConfig{hash: hash, status: pp.status})
	logger.Info("configuration applied", "targets", len(cfg.Targets), "hash", hash)
}

// keepMovesFrom undoes the moves away from a pod whose push failed: those targets stay on it until a later
// reconcile manages to take them off, so that no target is ever on two collectors.
func (p *placementPlan) keepMovesFrom(ordinal int) {
	for i, m := range p.result.Moves {
		if m.From != ordinal {
			continue
		}
		if m.To == placement.NoPod {
			p.result.Unassigned = without(p.result.Unassigned, m.Target)
		} else {
			p.onPod[m.To] = without(p.onPod[m.To], m.Target)
		}
		p.held[m.Target] = ordinal
		delete(p.result.Assignments, m.Target)
		p.result.Moves[i].To = ordinal
	}
	kept := p.result.Moves[:0]
	for _, m := range p.result.Moves {
		if m.From != m.To {
			kept = append(kept, m)
		}
	}
	p.result.Moves = kept
}

func without(names []string, drop string) []string {
	out := names[:0]
	for _, n := range names {
		if n != drop {
			out = append(out, n)
		}
	}
	return out
}

// acknowledged tells whether st records that this very collector — the pod (UID) and its container (restart
// count) — acknowledged the configuration hash.
func acknowledged(st operatorv1alpha1.CollectorStatus, pod *corev1.Pod, hash string) bool {
	return st.UID == string(pod.UID) && st.Restarts == containerRestarts(pod) && st.ConfigHash == hash
}

// containerRestarts is the collector container's restart count: each restart starts gNMIc with only its
// bootstrap configuration.
func containerRestarts(pod *corev1.Pod) int32 {
	for _, c := range pod.Status.ContainerStatuses {
		if c.Name == workload.ContainerName {
			return c.RestartCount
		}
	}
	return 0
}
