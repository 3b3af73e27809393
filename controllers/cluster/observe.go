package cluster

import (
	"context"
	"crypto/tls"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/credentials"
	"github.com/gnmic-operator/gnmic-operator/controllers/owned"
	"github.com/gnmic-operator/gnmic-operator/internal/clusterplacement"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/internal/render"
	"github.com/gnmic-operator/gnmic-operator/internal/selection"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

// world is everything one reconcile of a Cluster knows, read once at its start.
type world struct {
	selection selection.Selection
	// targets are all Targets of the namespace: selected ones and those that still carry a state for this
	// Cluster from an earlier selection.
	targets []operatorv1alpha1.Target
	// pipelines are all Pipelines of the namespace.
	pipelines []operatorv1alpha1.Pipeline
	// objects are everything of the namespace that Pipelines select from, as listed once for this reconcile.
	objects selection.Objects
	conn    render.Connections
	// targetTLS is the Cluster's target TLS Secret, which carries the TLS files of its targets to every
	// collector pod: what it should hold and what it held.
	targetTLS credentials.TargetTLS
	// taken is the objects of the names the Cluster needs that are someone else's, left as they are: found by
	// observe (the Cluster's own Secrets) and by ensureWorkload.
	taken owned.Taken
	// pods are the Cluster's collector pods by ordinal; terminating are those being deleted, whose collectors
	// may still run for their termination grace period.
	pods        map[int]*corev1.Pod
	terminating []*corev1.Pod
	// lost are the pods that look ready but cannot serve (their Node is lost, or their collector is silent).
	lost map[int]lostPod
	// desired are the ordinals of the pods the Cluster should run: 0..replicas-1, or on a Cluster with domains
	// the numbers (domains.Slot) of every domain's pods 0..desired-1. split is how the replicas are spread
	// over the domains, nil without domains.
	desired    []int
	desiredSet map[int]bool
	split      *domainSplit
	// current is each target's pod ordinal as its status records it; last the ordinal of the pod it belongs
	// on while it is not there (status' lastPod).
	current map[string]int
	last    map[string]int
	// recordedVersion moves whenever current or last change (they are the fleet memory's, kept in place).
	recordedVersion uint64
	// weights is what each selected target weighs in placement, and how the pods fill; the zero value by
	// count.
	weights clusterplacement.Weights
	// responseRates are the measured targets' response rates (per second) on a Cluster that weighs by
	// Measured (measure.go).
	responseRates map[string]float64
	// responsesRising tells whether a target's response counter rose between the last two scrapes of a pod's
	// collector; nil unless the Cluster weighs by Measured (measure.go).
	responsesRising func(target string, pod types.UID) bool
	// apiTLS is the operator's TLS towards the collectors; nil when the Cluster opted out of TLS.
	apiTLS *credentials.APITLS
	// fingerprintKey keys the fingerprints of the collectors' configurations (credentials.FingerprintKey).
	fingerprintKey []byte
	// rendered is the configuration of every selected target that renders, rendered once per reconcile; each
	// pod's configuration is cut from it. skips are the objects left out and why; renderErr is set when the
	// configuration as a whole is invalid (then no pod can be pushed).
	rendered  gnmic.Config
	skips     []render.SkipError
	renderErr error
	// skippedByTarget indexes the skips of targets by name: status is written per target.
	skippedByTarget map[string]render.SkipError
	// published is what ensureWorkload did of the prometheus outputs' ServiceMonitors (scrape.go).
	published published
	// placeableNames are what placeable gives, made on its first call.
	placeableNames []string
	// podNames are the names of the Cluster's pods by ordinal, as podName made them.
	podNames map[int]string
}

// podName is workload.PodName, made once per ordinal: every target's status names its pod.
func (w *world) podName(cluster *operatorv1alpha1.Cluster, ordinal int) string {
	if name, ok := w.podNames[ordinal]; ok {
		return name
	}
	if w.podNames == nil {
		w.podNames = map[int]string{}
	}
	name := workload.PodName(cluster, ordinal)
	w.podNames[ordinal] = name
	return name
}

// isDesired tells whether the pod with this ordinal is one the Cluster should run.
func (w *world) isDesired(ordinal int) bool {
	return w.desiredSet[ordinal]
}

// silentPods are the lost pods that only their collector's silence makes lost: they are still asked for
// their state, to notice when they answer again.
func (w *world) silentPods() []int {
	var out []int
	for ordinal, l := range w.lost {
		if l.silent {
			out = append(out, ordinal)
		}
	}
	sort.Ints(out)
	return out
}

// placeable are the targets placement may put on pods: those that render. A target that cannot be
// configured is sent nowhere and takes no capacity.
func (w *world) placeable() []string {
	if w.placeableNames == nil {
		// The rendered targets are some of the selected ones: as many means all of them, and no lookup is needed.
		every := w.renderErr != nil || len(w.rendered.Targets) == len(w.selection.Targets)
		w.placeableNames = make([]string, 0, len(w.selection.Targets))
		for _, st := range w.selection.Targets { // sorted by name, as rendered.TargetNames would be
			if every {
				w.placeableNames = append(w.placeableNames, st.Target.Name)
			} else if _, rendered := w.rendered.Targets[st.Target.Name]; rendered {
				w.placeableNames = append(w.placeableNames, st.Target.Name)
			}
		}
	}
	return w.placeableNames
}

// skippedTarget is why a selected target cannot be configured, if it cannot.
func (w *world) skippedTarget(name string) (render.SkipError, bool) {
	skip, ok := w.skippedByTarget[name]
	return skip, ok
}

// skippedTargetNames are the selected targets that cannot be configured, sorted.
func (w *world) skippedTargetNames() []string {
	return slices.Sorted(maps.Keys(w.skippedByTarget))
}

// skippedTargets counts the selected targets that cannot be configured.
func (w *world) skippedTargets() int { return len(w.skippedByTarget) }

// clientTLS is the TLS configuration for the collectors' REST API, nil for plain HTTP.
func (w *world) clientTLS() *tls.Config {
	if w.apiTLS == nil {
		return nil
	}
	return w.apiTLS.Client
}

// fingerprint is the Cluster's keyed fingerprint of a collector configuration: what status shows of a pod's
// configuration, and what the reconciler tells configurations and their parts apart by (a plain hash would let
// anyone who reads status confirm a guessed password; credentials.FingerprintKey).
func (w *world) fingerprint(cfg gnmic.Config) (string, error) {
	return cfg.Fingerprint(w.fingerprintKey)
}

// fingerprintOrNone is fingerprint, empty for a configuration that cannot be encoded.
func (w *world) fingerprintOrNone(cfg gnmic.Config) string {
	fingerprint, err := w.fingerprint(cfg)
	if err != nil {
		return ""
	}
	return fingerprint
}

// sharedPart fingerprints what every pod of a Cluster receives alike: its outputs, inputs and processors.
func (w *world) sharedPart(cfg gnmic.Config) string {
	return w.fingerprintOrNone(gnmic.Config{Outputs: cfg.Outputs, Inputs: cfg.Inputs, Processors: cfg.Processors})
}

func (r *Reconciler) observe(ctx context.Context, cluster *operatorv1alpha1.Cluster) (*world, error) {
	// The world is read, never changed: its objects are the cache's own (no deep copies, which cost a tenth of a
	// reconcile at 50,000 Targets), and whatever writes one of them writes a copy (docs/development.md).
	ns := client.InNamespace(cluster.Namespace)
	noCopy := client.UnsafeDisableDeepCopy
	var (
		pipelines operatorv1alpha1.PipelineList
		subs      operatorv1alpha1.SubscriptionList
		outputs   operatorv1alpha1.OutputList
		inputs    operatorv1alpha1.InputList
		procs     operatorv1alpha1.ProcessorList
		profiles  operatorv1alpha1.TargetProfileList
		policies  operatorv1alpha1.TunnelTargetPolicyList
		pods      corev1.PodList
	)
	for _, l := range []struct {
		what string
		list client.ObjectList
		opts []client.ListOption
	}{
		{"pipelines", &pipelines, []client.ListOption{ns, noCopy}},
		{"subscriptions", &subs, []client.ListOption{ns, noCopy}},
		{"outputs", &outputs, []client.ListOption{ns, noCopy}},
		{"inputs", &inputs, []client.ListOption{ns, noCopy}},
		{"processors", &procs, []client.ListOption{ns, noCopy}},
		{"target profiles", &profiles, []client.ListOption{ns, noCopy}},
		{"tunnel target policies", &policies, []client.ListOption{ns, noCopy}},
		{"pods", &pods, []client.ListOption{ns, client.MatchingLabels(workload.Labels(cluster)), noCopy}},
	} {
		if err := r.List(ctx, l.list, l.opts...); err != nil {
			return nil, fmt.Errorf("list %s: %w", l.what, err)
		}
	}

	memory := r.memoryOf(client.ObjectKeyFromObject(cluster))
	listed, unchanged, err := r.listTargets(ctx, cluster.Namespace, memory)
	if err != nil {
		return nil, err
	}
	objects := selection.Objects{
		Pipelines: pipelines.Items, Targets: listed, Subscriptions: subs.Items,
		Outputs: outputs.Items, Inputs: inputs.Items, Processors: procs.Items,
	}
	w := &world{
		selection: memory.fleet.Select(cluster.Name, objects, unchanged),
		objects:   objects,
		targets:   listed,
		pipelines: pipelines.Items,
		pods:      map[int]*corev1.Pod{},
	}

	w.conn.Profiles = map[string]*operatorv1alpha1.TargetProfile{}
	for i := range profiles.Items {
		w.conn.Profiles[profiles.Items[i].Name] = &profiles.Items[i]
	}
	// The Secrets of targets (credentials, TLS) and those the Outputs and Inputs take values from.
	tunnel := tunnelPolicies(cluster, policies.Items, w.conn.Profiles, subs.Items)
	tunnelSecretNames, tunnelTLSSecrets := tunnelSecrets(tunnel, w.conn.Profiles)
	used := memory.fleet.Profiles() // selection.ProfilesOf(w.selection)
	secretNames := append(selection.SecretsOfProfiles(used, w.conn.Profiles), render.ConfigSecrets(w.selection)...)
	secretNames = append(secretNames, tunnelSecretNames...)
	slices.Sort(secretNames)
	secrets, err := r.credentials.Secrets(ctx, cluster.Namespace, slices.Compact(secretNames))
	if err != nil {
		return nil, err
	}
	w.conn.Secrets = secrets
	tlsSecrets := append(selection.TLSSecretsOfProfiles(used, w.conn.Profiles), tunnelTLSSecrets...)
	slices.Sort(tlsSecrets)
	if w.targetTLS, err = r.credentials.TargetTLS(ctx, cluster, slices.Compact(tlsSecrets), secrets); err != nil {
		return nil, err
	}
	w.conn.TLSOmitted = w.targetTLS.Bundle.Omitted
	w.conn.ReservedPorts = workload.ReservedPorts(cluster)
	w.rendered, w.skips, w.renderErr = memory.fleet.Render(w.selection, w.conn)
	// The placeable targets are made again only when the selected or the rendered targets changed.
	if memory.fleet.NamesKept() && memory.placeable != nil {
		w.placeableNames = memory.placeable
	} else {
		memory.placeable = w.placeable()
	}
	addTunnelTargetMatches(ctx, w, tunnel, subs.Items)
	w.skippedByTarget = map[string]render.SkipError{}
	for _, skip := range w.skips {
		if skip.Kind == selection.KindTarget {
			w.skippedByTarget[skip.Name] = skip
		}
	}
	own, err := r.credentials.OperatorSecret(ctx, cluster)
	if err != nil {
		return nil, err
	}
	w.fingerprintKey = credentials.FingerprintKey(own)
	if w.apiTLS, err = r.credentials.APITLS(ctx, cluster, own); err != nil {
		return nil, err
	}
	if err := r.credentials.GNMITLS(ctx, cluster, own); err != nil {
		return nil, err
	}
	if err := r.credentials.TunnelTLS(ctx, cluster, own); err != nil {
		return nil, err
	}

	for i := range pods.Items {
		p := &pods.Items[i]
		ordinal, ok := workload.PodOrdinal(cluster, p.Name)
		switch {
		case ok && p.DeletionTimestamp.IsZero():
			w.pods[ordinal] = p
		case ok:
			w.terminating = append(w.terminating, p)
		}
	}
	if w.lost, err = r.findLostPods(ctx, client.ObjectKeyFromObject(cluster), w); err != nil {
		return nil, err
	}
	w.current, w.last, w.recordedVersion = memory.fleet.Recorded(cluster)
	w.weights = clusterplacement.Weigh(cluster, w.selection)
	return w, nil
}

// listTargets lists the namespace's Targets from the cache, without deep copies, or gives the last list again
// when no Target of the namespace changed since (targetChanges), and no older than targetRelist; unchanged
// tells which. When a few Targets changed since, the last list is brought up to date with just those, taken from
// the cache again (refreshTargets). The list is kept in the Cluster's memory.
func (r *Reconciler) listTargets(ctx context.Context, namespace string, memory *clusterMemory) (listed []operatorv1alpha1.Target, unchanged bool, err error) {
	kept := &memory.targets
	var changes uint64
	if r.targetChanges != nil {
		changes = r.targetChanges.of(namespace) // before the list: a change it misses moves the count after
		if kept.valid && r.now().Sub(kept.at) < targetRelist {
			if kept.changes == changes {
				return kept.items, true, nil
			}
			if names, count, ok := r.targetChanges.since(namespace, kept.changes); ok && len(names) <= targetRefreshes {
				if err := r.refreshTargets(ctx, namespace, kept, names); err == nil {
					kept.changes = count
					return kept.items, false, nil
				}
			}
		}
	}
	var targets operatorv1alpha1.TargetList
	if err := r.List(ctx, &targets, client.InNamespace(namespace), client.UnsafeDisableDeepCopy); err != nil {
		*kept = listedTargets{}
		return nil, false, fmt.Errorf("list targets: %w", err)
	}
	*kept = listedTargets{items: targets.Items, changes: changes, at: r.now(), valid: r.targetChanges != nil}
	return targets.Items, false, nil
}

// targetRefreshes is how many changed Targets a reconcile takes from the cache one by one into its last list;
// more, and it lists the namespace again.
const targetRefreshes = 256

// refreshTargets brings the list up to date with the named Targets: each is taken from the cache again (without a
// deep copy) into its place in the list, added at its end, or, gone, taken out (the list's last Target takes its
// place). The list's order means nothing. On an error the list is dropped: the caller lists again.
func (r *Reconciler) refreshTargets(ctx context.Context, namespace string, kept *listedTargets, names []string) error {
	if kept.index == nil {
		kept.index = make(map[string]int, len(kept.items))
		for i := range kept.items {
			kept.index[kept.items[i].Name] = i
		}
	}
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		var t operatorv1alpha1.Target
		err := r.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, &t, client.UnsafeDisableDeepCopy)
		i, listed := kept.index[name]
		switch {
		case err == nil && listed:
			kept.items[i] = t
		case err == nil:
			kept.index[name] = len(kept.items)
			kept.items = append(kept.items, t)
		case apierrors.IsNotFound(err) && listed:
			last := len(kept.items) - 1
			kept.items[i] = kept.items[last]
			kept.index[kept.items[i].Name] = i
			kept.items[last] = operatorv1alpha1.Target{} // nothing kept alive by the slice beyond its length
			kept.items = kept.items[:last]
			delete(kept.index, name)
		case apierrors.IsNotFound(err):
		default:
			*kept = listedTargets{}
			return fmt.Errorf("get target %s: %w", name, err)
		}
	}
	return nil
}

// targetRelist bounds how long a list of Targets is reused while no change is counted: the count follows the
// caches the watch handlers run on, and a replica whose share moves reads from a new cache of the namespace,
// which counts its changes from when it started.
const targetRelist = 10 * time.Minute

// listedTargets is a namespace's Targets as a reconcile of the Cluster last listed them (and brought up to date
// since), with the count of the namespace's Target changes read before that list, when it was made, and where
// each Target is in it (made on the first refresh).
type listedTargets struct {
	items   []operatorv1alpha1.Target
	changes uint64
	at      time.Time
	valid   bool
	index   map[string]int
}
