package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/owned"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

// A prometheus output publishes, on each Cluster that sends to it, a Service selecting the collector pods on its
// port and, where prometheus-operator's CRD is installed, a ServiceMonitor of that Service (docs/outputs.md).
// Both are owned by the Cluster: deleted with it, and by the operator once the Cluster stops sending to the
// output. The operator reads and writes ServiceMonitors through the API server only (no informer: the kind
// may not exist).
//
// +kubebuilder:rbac:groups=core,resources=services,verbs=delete
// +kubebuilder:rbac:groups=monitoring.coreos.com,resources=servicemonitors,verbs=get;create;update;delete

// published is what this reconcile did of a Cluster's scrapeable outputs, for its status.
type published struct {
	// monitored counts the prometheus outputs that want a ServiceMonitor.
	monitored int
	// crdMissing is true when the ServiceMonitor CRD is not installed; monitorErr is the last failure to read
	// discovery or write a ServiceMonitor.
	crdMissing bool
	monitorErr error
}

// monitorCheck is when the operator last found a ServiceMonitor as it wants it.
type monitorCheck struct {
	hash string
	at   time.Time
}

// scrapedOutputs are the prometheus outputs the collectors of the Cluster run. While the configuration as a
// whole does not render, which outputs they run is not known: ok is false.
func scrapedOutputs(w *world) (outputs []workload.ScrapedOutput, ok bool) {
	if w.renderErr != nil {
		return nil, false
	}
	return workload.ScrapedOutputs(w.rendered.Outputs, w.selection.Outputs), true
}

// ensureOutputServices keeps a Service per prometheus output the collectors run, deletes those of outputs the
// Cluster no longer sends to, and keeps their ServiceMonitors. A Service whose name someone else holds is left
// alone and recorded in w.taken (it never takes another object over), and so is its ServiceMonitor.
func (r *Reconciler) ensureOutputServices(ctx context.Context, cluster *operatorv1alpha1.Cluster, w *world) error {
	outputs, ok := scrapedOutputs(w)
	if !ok {
		return nil
	}
	keep := map[string]bool{}
	var mine []workload.ScrapedOutput
	for _, s := range outputs {
		svc := workload.OutputService(cluster, s)
		keep[svc.Name] = true
		if err := w.taken.Keep(owned.Ensure(ctx, r.owned, cluster, svc, &corev1.Service{}, keepAllocated)); err != nil {
			return err
		}
		if !w.taken.Has("Service", svc.Name) {
			mine = append(mine, s)
		}
	}
	if err := r.deleteUnwantedOutputServices(ctx, cluster, keep); err != nil {
		return err
	}
	w.published = r.ensureServiceMonitors(ctx, cluster, mine, &w.taken)
	return nil
}

// keepAllocated copies want's spec over have's, keeping what the API server allocated: the cluster IPs and
// IP families, and the node ports while the type still has them.
func keepAllocated(have, want *corev1.Service) {
	want.Spec.ClusterIP, want.Spec.ClusterIPs = have.Spec.ClusterIP, have.Spec.ClusterIPs
	want.Spec.IPFamilies, want.Spec.IPFamilyPolicy = have.Spec.IPFamilies, have.Spec.IPFamilyPolicy
	if want.Spec.Type != corev1.ServiceTypeClusterIP {
		for i := range want.Spec.Ports {
			for _, p := range have.Spec.Ports {
				if p.Name == want.Spec.Ports[i].Name && want.Spec.Ports[i].NodePort == 0 {
					want.Spec.Ports[i].NodePort = p.NodePort
				}
			}
		}
		if want.Spec.Type == have.Spec.Type {
			want.Spec.HealthCheckNodePort = have.Spec.HealthCheckNodePort
		}
	}
	have.Spec = want.Spec
}

// deleteUnwantedOutputServices deletes the output Services the Cluster controls whose names are not in keep.
func (r *Reconciler) deleteUnwantedOutputServices(ctx context.Context, cluster *operatorv1alpha1.Cluster, keep map[string]bool) error {
	var list corev1.ServiceList
	if err := r.List(ctx, &list, client.InNamespace(cluster.Namespace), client.MatchingLabels(workload.Labels(cluster)),
		client.HasLabels{operatorv1alpha1.OutputServiceLabel}); err != nil {
		return fmt.Errorf("list output services of cluster %s: %w", cluster.Name, err)
	}
	for i := range list.Items {
		svc := &list.Items[i]
		owner := metav1.GetControllerOf(svc)
		if keep[svc.Name] || owner == nil || owner.UID != cluster.UID || !svc.DeletionTimestamp.IsZero() {
			continue
		}
		log.FromContext(ctx).Info("deleting", "kind", "Service", "name", svc.Name, "why", "the Cluster no longer runs its prometheus output")
		if err := r.Delete(ctx, svc); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete service %s: %w", svc.Name, err)
		}
		if err := r.deleteServiceMonitor(ctx, cluster, svc.Name); err != nil {
			return err
		}
	}
	return nil
}

// ensureServiceMonitors keeps a ServiceMonitor for each output that wants one, and deletes that of each output
// that no longer does, while the CRD is installed. A failure is reported in the Cluster's status and retried at
// the next reconcile; it never fails the reconcile: ServiceMonitors are an extra.
func (r *Reconciler) ensureServiceMonitors(ctx context.Context, cluster *operatorv1alpha1.Cluster, outputs []workload.ScrapedOutput,
	taken *owned.Taken) published {
	var p published
	for _, s := range outputs {
		if s.ServiceMonitorEnabled() {
			p.monitored++
		}
	}
	installed, err := r.serviceMonitorCRD.Installed(ctx)
	if err != nil {
		p.monitorErr = fmt.Errorf("ask discovery for the ServiceMonitor CRD: %w", err)
	}
	if !installed {
		p.crdMissing = err == nil
		return p
	}
	memory := r.memoryOf(client.ObjectKeyFromObject(cluster))
	for _, s := range outputs {
		name := workload.OutputServiceName(cluster, s.Name)
		var err error
		if s.ServiceMonitorEnabled() {
			err = r.ensureServiceMonitor(ctx, cluster, workload.OutputServiceMonitor(cluster, s), memory)
		} else {
			err = r.deleteServiceMonitor(ctx, cluster, name)
		}
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			r.serviceMonitorCRD.forgetAnswer() // the CRD went away since discovery said otherwise
		}
		err = taken.Keep(err)
		if err != nil {
			p.monitorErr = err
		}
	}
	// A failure that repeats (a permission missing) is logged once, not at every reconcile; the Cluster's
	// ServiceMonitors condition carries it meanwhile.
	if said := errorText(p.monitorErr); said != memory.monitorErrLogged {
		if p.monitorErr != nil {
			log.FromContext(ctx).Error(p.monitorErr, "keeping the ServiceMonitors of the prometheus outputs")
		}
		memory.monitorErrLogged = said
	}
	return p
}

// ensureServiceMonitor creates want, controlled by the Cluster, or updates the existing one when its spec,
// labels or owner differ from want's. What the operator found as it wants is not read again for the CRD
// recheck interval, unless what it wants changed.
func (r *Reconciler) ensureServiceMonitor(ctx context.Context, cluster *operatorv1alpha1.Cluster, want *unstructured.Unstructured,
	memory *clusterMemory) error {
	if err := controllerutil.SetControllerReference(cluster, want, r.Scheme); err != nil {
		return fmt.Errorf("own servicemonitor %s: %w", want.GetName(), err)
	}
	hash, err := hashOfObject(want.Object)
	if err != nil {
		return err
	}
	if c, ok := memory.monitors[want.GetName()]; ok && c.hash == hash && r.now().Sub(c.at) < r.CRDRecheck {
		return nil
	}
	have := &unstructured.Unstructured{}
	have.SetGroupVersionKind(workload.ServiceMonitorGVK)
	err = r.APIReader.Get(ctx, client.ObjectKeyFromObject(want), have)
	switch {
	case apierrors.IsNotFound(err):
		log.FromContext(ctx).Info("creating", "kind", "ServiceMonitor", "name", want.GetName())
		if err := r.Create(ctx, want); err != nil {
			return fmt.Errorf("create servicemonitor %s: %w", want.GetName(), err)
		}
	case err != nil:
		return fmt.Errorf("get servicemonitor %s: %w", want.GetName(), err)
	default:
		if err := owned.CheckClusterOwns(cluster, have, "ServiceMonitor"); err != nil {
			return err
		}
		if !serviceMonitorHolds(have, want) {
			log.FromContext(ctx).Info("updating", "kind", "ServiceMonitor", "name", want.GetName())
			have.Object["spec"] = want.Object["spec"]
			have.SetLabels(workload.Merged(have.GetLabels(), want.GetLabels()))
			have.SetOwnerReferences(want.GetOwnerReferences())
			if err := r.Update(ctx, have); err != nil {
				return fmt.Errorf("update servicemonitor %s: %w", want.GetName(), err)
			}
		}
	}
	if memory.monitors == nil {
		memory.monitors = map[string]monitorCheck{}
	}
	memory.monitors[want.GetName()] = monitorCheck{hash: hash, at: r.now()}
	return nil
}

// serviceMonitorHolds tells whether have has want's spec, labels and owner references.
func serviceMonitorHolds(have, want *unstructured.Unstructured) bool {
	for k, v := range want.GetLabels() {
		if have.GetLabels()[k] != v {
			return false
		}
	}
	return equality.Semantic.DeepEqual(have.Object["spec"], want.Object["spec"]) &&
		equality.Semantic.DeepEqual(have.GetOwnerReferences(), want.GetOwnerReferences())
}

// deleteServiceMonitor deletes the Cluster's ServiceMonitor name, if the CRD is installed and there is one the
// Cluster controls.
func (r *Reconciler) deleteServiceMonitor(ctx context.Context, cluster *operatorv1alpha1.Cluster, name string) error {
	if installed, err := r.serviceMonitorCRD.Installed(ctx); err != nil || !installed {
		return nil // nothing to delete; an error is reported by ensureServiceMonitors
	}
	delete(r.memoryOf(client.ObjectKeyFromObject(cluster)).monitors, name)
	have := &unstructured.Unstructured{}
	have.SetGroupVersionKind(workload.ServiceMonitorGVK)
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: name}, have)
	switch {
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		return nil
	case err != nil:
		return fmt.Errorf("get servicemonitor %s: %w", name, err)
	}
	if owner := metav1.GetControllerOf(have); owner == nil || owner.UID != cluster.UID {
		return nil
	}
	log.FromContext(ctx).Info("deleting", "kind", "ServiceMonitor", "name", name)
	if err := r.Delete(ctx, have); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete servicemonitor %s: %w", name, err)
	}
	return nil
}

// setServiceMonitorsCondition says whether the Cluster's prometheus outputs have their ServiceMonitors, for a
// Cluster with at least one that wants one (others carry no such condition), and raises a Normal event once,
// when it starts to say that the CRD is missing.
func (r *Reconciler) setServiceMonitorsCondition(cluster *operatorv1alpha1.Cluster, w *world) {
	if w.renderErr != nil {
		return
	}
	p := w.published
	if p.monitored == 0 {
		meta.RemoveStatusCondition(&cluster.Status.Conditions, operatorv1alpha1.ConditionServiceMonitors)
		return
	}
	c := metav1.Condition{Type: operatorv1alpha1.ConditionServiceMonitors, Status: metav1.ConditionTrue,
		Reason:  operatorv1alpha1.ReasonServiceMonitorsKept,
		Message: fmt.Sprintf("%d prometheus output(s) have a ServiceMonitor", p.monitored), ObservedGeneration: cluster.Generation}
	switch {
	case p.crdMissing:
		c.Status, c.Reason = metav1.ConditionFalse, operatorv1alpha1.ReasonServiceMonitorCRDMissing
		c.Message = "the ServiceMonitor CRD (monitoring.coreos.com/v1) is not installed: the prometheus outputs have a " +
			"Service each, and get their ServiceMonitor once it is installed"
	case p.monitorErr != nil:
		c.Status, c.Reason = metav1.ConditionFalse, "WriteFailed"
		c.Message = truncate(p.monitorErr.Error(), maxConditionMessage)
	}
	// The memory covers the reconciles that read the Cluster before the status that said so was written.
	memory := r.memoryOf(client.ObjectKeyFromObject(cluster))
	was := meta.FindStatusCondition(cluster.Status.Conditions, operatorv1alpha1.ConditionServiceMonitors)
	if p.crdMissing && !memory.saidCRDMissing && (was == nil || was.Reason != c.Reason) {
		r.Recorder.Event(cluster, corev1.EventTypeNormal, operatorv1alpha1.EventServiceMonitorCRDMissing, c.Message)
	}
	memory.saidCRDMissing = p.crdMissing
	meta.SetStatusCondition(&cluster.Status.Conditions, c)
}

// hashOfObject fingerprints an object as it would be written.
func hashOfObject(obj map[string]any) (string, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return "", fmt.Errorf("encode object: %w", err)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:12]), nil
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
