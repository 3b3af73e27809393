package harness

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// OLMPhase is one change of an OLM object the watcher saw.
type OLMPhase struct {
	At   time.Time
	Kind string
	// Object is namespace/name.
	Object string
	// Phase is the object's state: a Subscription's status.state, an InstallPlan's status.phase, a CSV's
	// status.phase, a Job's creation; "deleted" once it is gone.
	Phase string
	// Detail is the rest of its summary (current and installed CSV, approval, reason, message…).
	Detail string
}

// OLMWatch records and logs the Subscriptions, InstallPlans and ClusterServiceVersions (not OLM's copies
// of a CSV in the target namespaces) of the cluster as their state changes, and every Job created.
type OLMWatch struct {
	mu     sync.Mutex
	phases []OLMPhase
	last   map[string]string
	jobs   []string
	cancel context.CancelFunc
	log    func(format string, args ...any)
	start  time.Time
}

// WatchOLM starts an OLMWatch that logs with logf until Stop.
func (o *OLM) WatchOLM(ctx context.Context, logf func(format string, args ...any)) (*OLMWatch, error) {
	ctx, cancel := context.WithCancel(ctx)
	w := &OLMWatch{last: map[string]string{}, cancel: cancel, log: logf, start: time.Now()}
	kinds := []struct {
		obj     client.Object
		kind    string
		summary func(client.Object) (string, string, bool)
	}{
		{&operatorsv1alpha1.Subscription{}, "Subscription", subscriptionSummary},
		{&operatorsv1alpha1.InstallPlan{}, "InstallPlan", installPlanSummary},
		{&operatorsv1alpha1.ClusterServiceVersion{}, "ClusterServiceVersion", csvSummary},
	}
	objects, err := crcache.New(o.cp.Config, crcache.Options{Scheme: OLMScheme()})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("cache: %w", err)
	}
	for _, k := range kinds {
		informer, err := objects.GetInformer(ctx, k.obj)
		if err != nil {
			cancel()
			return nil, fmt.Errorf("informer for %ss: %w", k.kind, err)
		}
		kind, summary := k.kind, k.summary
		if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { w.observe(kind, obj, summary) },
			UpdateFunc: func(_, obj any) { w.observe(kind, obj, summary) },
			DeleteFunc: func(obj any) {
				if m, ok := deletedObject(obj).(client.Object); ok {
					w.record(kind, m.GetNamespace()+"/"+m.GetName(), "deleted", "")
				}
			},
		}); err != nil {
			cancel()
			return nil, err
		}
	}
	go func() {
		if err := objects.Start(ctx); err != nil {
			o.cp.log("OLM watch: %v", err)
		}
	}()
	if !objects.WaitForCacheSync(ctx) {
		cancel()
		return nil, fmt.Errorf("OLM watch did not sync")
	}
	jobs := informers.NewSharedInformerFactory(o.cp.Clientset, 0).Batch().V1().Jobs().Informer()
	if _, err := jobs.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		if j, ok := obj.(*batchv1.Job); ok {
			w.mu.Lock()
			w.jobs = append(w.jobs, j.Namespace+"/"+j.Name)
			w.mu.Unlock()
			w.record("Job", j.Namespace+"/"+j.Name, "created", "")
		}
	}}); err != nil {
		cancel()
		return nil, err
	}
	go jobs.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), jobs.HasSynced) {
		cancel()
		return nil, fmt.Errorf("OLM watch did not sync")
	}
	return w, nil
}

func (w *OLMWatch) observe(kind string, obj any, summary func(client.Object) (string, string, bool)) {
	o, ok := obj.(client.Object)
	if !ok {
		return
	}
	phase, detail, show := summary(o)
	if show {
		w.record(kind, o.GetNamespace()+"/"+o.GetName(), phase, detail)
	}
}

func (w *OLMWatch) record(kind, object, phase, detail string) {
	key := kind + " " + object
	w.mu.Lock()
	if w.last[key] == phase+" "+detail {
		w.mu.Unlock()
		return
	}
	w.last[key] = phase + " " + detail
	p := OLMPhase{At: time.Now(), Kind: kind, Object: object, Phase: phase, Detail: detail}
	w.phases = append(w.phases, p)
	w.mu.Unlock()
	if w.log != nil {
		if detail != "" {
			detail = " (" + detail + ")"
		}
		w.log("OLM %7.1fs  %s %s: %s%s", p.At.Sub(w.start).Seconds(), kind, object, phase, detail)
	}
}

// Phases returns what was seen so far.
func (w *OLMWatch) Phases() []OLMPhase {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]OLMPhase(nil), w.phases...)
}

// Jobs lists every Job created since the watch began, as namespace/name.
func (w *OLMWatch) Jobs() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.jobs...)
}

// Stop ends the watch.
func (w *OLMWatch) Stop() { w.cancel() }

func subscriptionSummary(obj client.Object) (string, string, bool) {
	s, ok := obj.(*operatorsv1alpha1.Subscription)
	if !ok {
		return "", "", false
	}
	state := string(s.Status.State)
	if state == "" {
		state = "(no state)"
	}
	detail := []string{"currentCSV=" + s.Status.CurrentCSV, "installedCSV=" + s.Status.InstalledCSV}
	if s.Status.InstallPlanRef != nil {
		detail = append(detail, "installPlan="+s.Status.InstallPlanRef.Name)
	}
	if s.Status.Reason != "" {
		detail = append(detail, "reason="+string(s.Status.Reason))
	}
	for _, c := range s.Status.Conditions {
		if c.Status != corev1.ConditionTrue || c.Type == operatorsv1alpha1.SubscriptionCatalogSourcesUnhealthy {
			continue
		}
		if c.Type == operatorsv1alpha1.SubscriptionResolutionFailed && c.Message != "" {
			detail = append(detail, string(c.Type)+": "+c.Message)
			continue
		}
		detail = append(detail, string(c.Type))
	}
	return state, strings.Join(detail, " "), true
}

func installPlanSummary(obj client.Object) (string, string, bool) {
	p, ok := obj.(*operatorsv1alpha1.InstallPlan)
	if !ok {
		return "", "", false
	}
	phase := string(p.Status.Phase)
	if phase == "" {
		phase = "(no phase)"
	}
	detail := []string{"csv=" + strings.Join(p.Spec.ClusterServiceVersionNames, ","),
		"approval=" + string(p.Spec.Approval), "approved=" + strconv.FormatBool(p.Spec.Approved),
		fmt.Sprintf("steps=%d", len(p.Status.Plan)), fmt.Sprintf("bundleLookups=%d", len(p.Status.BundleLookups))}
	if p.Status.Message != "" {
		detail = append(detail, "message="+p.Status.Message)
	}
	return phase, strings.Join(detail, " "), true
}

func csvSummary(obj client.Object) (string, string, bool) {
	c, ok := obj.(*operatorsv1alpha1.ClusterServiceVersion)
	if !ok || c.Labels[operatorsv1alpha1.CopiedLabelKey] != "" {
		return "", "", false
	}
	phase := string(c.Status.Phase)
	if phase == "" {
		phase = "(no phase)"
	}
	detail := []string{}
	if c.Status.Reason != "" {
		detail = append(detail, "reason="+string(c.Status.Reason))
	}
	if c.Status.Phase != operatorsv1alpha1.CSVPhaseSucceeded && c.Status.Message != "" {
		detail = append(detail, "message="+c.Status.Message)
	}
	if c.DeletionTimestamp != nil {
		detail = append(detail, "deleting")
	}
	return phase, strings.Join(detail, " "), true
}

// InstallPlanFor returns the InstallPlans of namespace that install csv, newest first.
func (o *OLM) InstallPlanFor(ctx context.Context, namespace, csv string) ([]operatorsv1alpha1.InstallPlan, error) {
	var list operatorsv1alpha1.InstallPlanList
	if err := o.client.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	var out []operatorsv1alpha1.InstallPlan
	for _, p := range list.Items {
		for _, name := range p.Spec.ClusterServiceVersionNames {
			if name == csv {
				out = append(out, p)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[j].CreationTimestamp.Before(&out[i].CreationTimestamp) })
	return out, nil
}

// ApproveInstallPlan approves an InstallPlan of Manual approval.
func (o *OLM) ApproveInstallPlan(ctx context.Context, namespace, name string) error {
	plan := &operatorsv1alpha1.InstallPlan{}
	if err := o.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, plan); err != nil {
		return err
	}
	patch := client.MergeFrom(plan.DeepCopy())
	plan.Spec.Approved = true
	if err := o.client.Patch(ctx, plan, patch); err != nil {
		return fmt.Errorf("approve InstallPlan %s/%s: %w", namespace, name, err)
	}
	return nil
}
