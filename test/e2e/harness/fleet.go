package harness

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
)

// TargetRole labels the Targets the fleets of the harness select.
const TargetRole = "leaf"

// Client returns a controller-runtime client that knows the operator's kinds.
func (cp *ControlPlane) Client() (client.Client, error) {
	c, err := client.New(cp.Config, client.Options{Scheme: scheme()})
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return c, nil
}

// scheme knows the core kinds and the operator's.
func scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(operatorv1alpha1.AddToScheme(s))
	return s
}

// Fleet is one Cluster with its Pipeline and Targets in a namespace of its own.
type Fleet struct {
	Namespace string
	Cluster   string
	Replicas  int32
	// PodCapacity is spec.targetDistribution.podCapacity; 0 leaves it unset (capacity follows the fleet).
	PodCapacity int32
	// Tune, when set, changes the Cluster's spec before it is created.
	Tune func(*operatorv1alpha1.ClusterSpec)
}

// Create makes the namespace, a TargetProfile, a Subscription, an Output, a Pipeline selecting the
// Targets labelled role=leaf, and the Cluster; it waits for the namespace's default ServiceAccount.
func (f Fleet) Create(ctx context.Context, cp *ControlPlane, c client.Client) error {
	objects := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.Namespace}},
		&operatorv1alpha1.TargetProfile{ObjectMeta: metav1.ObjectMeta{Namespace: f.Namespace, Name: "routers"},
			Spec: operatorv1alpha1.TargetProfileSpec{Encoding: "JSON_IETF", TLS: &operatorv1alpha1.TargetTLS{SkipVerify: true}}},
		&operatorv1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: f.Namespace, Name: "counters", Labels: map[string]string{"set": "basic"}},
			Spec: operatorv1alpha1.SubscriptionSpec{Paths: []string{"/interfaces/interface/state/counters"}, Mode: "STREAM/SAMPLE"}},
		&operatorv1alpha1.Output{ObjectMeta: metav1.ObjectMeta{Namespace: f.Namespace, Name: "prometheus"},
			Spec: operatorv1alpha1.OutputSpec{Type: "prometheus"}},
		&operatorv1alpha1.Pipeline{ObjectMeta: metav1.ObjectMeta{Namespace: f.Namespace, Name: "leaves"},
			Spec: operatorv1alpha1.PipelineSpec{
				ClusterRef:            f.Cluster,
				TargetSelectors:       []metav1.LabelSelector{{MatchLabels: map[string]string{"role": TargetRole}}},
				SubscriptionSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"set": "basic"}}},
				Outputs:               &operatorv1alpha1.OutputSelection{OutputRefs: []string{"prometheus"}},
			}},
	}
	for _, obj := range objects {
		if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create %T %s: %w", obj, obj.GetName(), err)
		}
		if _, ok := obj.(*corev1.Namespace); ok {
			if err := cp.WaitForServiceAccount(ctx, f.Namespace); err != nil {
				return err
			}
		}
	}
	cluster := &operatorv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.Namespace, Name: f.Cluster},
		Spec: operatorv1alpha1.ClusterSpec{
			Image:    gnmic.DefaultImage, // its fakes answer as that release (collector_release.go)
			Replicas: &f.Replicas,
		},
	}
	if f.PodCapacity > 0 {
		capacity := f.PodCapacity
		cluster.Spec.TargetDistribution.PodCapacity = &capacity
	}
	if f.Tune != nil {
		f.Tune(&cluster.Spec)
	}
	if err := c.Create(ctx, cluster); err != nil {
		return fmt.Errorf("create Cluster %s: %w", f.Cluster, err)
	}
	return nil
}

// TargetName is the name of the i-th Target: zero-padded, so that names sort like numbers.
func TargetName(i int) string { return fmt.Sprintf("leaf%04d", i) }

// AddTargets creates Targets from..to-1.
func (f Fleet) AddTargets(ctx context.Context, c client.Client, from, to int) error {
	for i := from; i < to; i++ {
		t := &operatorv1alpha1.Target{
			ObjectMeta: metav1.ObjectMeta{Namespace: f.Namespace, Name: TargetName(i), Labels: map[string]string{"role": TargetRole}},
			Spec:       operatorv1alpha1.TargetSpec{Address: fmt.Sprintf("10.%d.%d.%d:57400", i/65536%256, i/256%256, i%256), Profile: "routers"},
		}
		if err := c.Create(ctx, t); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create Target %s: %w", t.Name, err)
		}
	}
	return nil
}

// DeleteTargets deletes Targets from..to-1.
func (f Fleet) DeleteTargets(ctx context.Context, c client.Client, from, to int) error {
	for i := from; i < to; i++ {
		t := &operatorv1alpha1.Target{ObjectMeta: metav1.ObjectMeta{Namespace: f.Namespace, Name: TargetName(i)}}
		if err := c.Delete(ctx, t); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete Target %s: %w", t.Name, err)
		}
	}
	return nil
}

// bulkWriters is how many writers CreateTargets and RemoveTargets run at once.
const bulkWriters = 16

// CreateTargets creates Targets from..to-1 as fast as the API server takes them, as a `kubectl apply` of an
// inventory would: bulkWriters at once, on a client without client-side rate limit (AddTargets creates them
// one after another).
func (f Fleet) CreateTargets(ctx context.Context, cp *ControlPlane, from, to int) error {
	return f.inParallel(ctx, cp, from, to, f.AddTargets)
}

// RemoveTargets deletes Targets from..to-1 the way CreateTargets creates them.
func (f Fleet) RemoveTargets(ctx context.Context, cp *ControlPlane, from, to int) error {
	return f.inParallel(ctx, cp, from, to, f.DeleteTargets)
}

func (f Fleet) inParallel(ctx context.Context, cp *ControlPlane, from, to int,
	each func(ctx context.Context, c client.Client, from, to int) error) error {
	cfg := rest.CopyConfig(cp.Config)
	cfg.QPS = -1 // only the API server sets the pace
	c, err := client.New(cfg, client.Options{Scheme: scheme()})
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	next := make(chan int)
	errs := make(chan error, bulkWriters)
	var wg sync.WaitGroup
	for range bulkWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var first error
			for i := range next {
				if err := each(ctx, c, i, i+1); err != nil && first == nil {
					first = err
				}
			}
			errs <- first
		}()
	}
	for i := from; i < to; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		if err != nil {
			all = append(all, err)
		}
	}
	return errors.Join(all...)
}

// Snapshot is what a fleet looks like at one moment.
type Snapshot struct {
	Replicas, ReadyReplicas int32
	Targets, Unassigned     int32
	// PodTargets is the number of targets each collector pod acknowledged (Cluster status).
	PodTargets map[string]int32
	// HPADesired and HPACurrent are the autoscaler's last figures; HPAReason the reasons of its conditions
	// (AbleToScale/ScalingActive[/ScalingLimited]) and HPAMessage what it says it did last.
	HPADesired, HPACurrent int32
	HPAReason, HPAMessage  string
}

// Observe reads the Cluster and, when hpa is not empty, the HorizontalPodAutoscaler.
func (f Fleet) Observe(ctx context.Context, cp *ControlPlane, c client.Client, hpa string) (Snapshot, error) {
	var s Snapshot
	cluster := &operatorv1alpha1.Cluster{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: f.Namespace, Name: f.Cluster}, cluster); err != nil {
		return s, fmt.Errorf("get Cluster %s: %w", f.Cluster, err)
	}
	if cluster.Spec.Replicas != nil {
		s.Replicas = *cluster.Spec.Replicas
	}
	s.ReadyReplicas = cluster.Status.ReadyReplicas
	s.Targets = cluster.Status.TargetsCount
	s.Unassigned = cluster.Status.UnassignedTargets
	s.PodTargets = map[string]int32{}
	for _, collector := range cluster.Status.Collectors {
		s.PodTargets[collector.Pod] = collector.Targets
	}
	if hpa == "" {
		return s, nil
	}
	h, err := cp.Clientset.AutoscalingV2().HorizontalPodAutoscalers(f.Namespace).Get(ctx, hpa, metav1.GetOptions{})
	if err != nil {
		return s, fmt.Errorf("get HorizontalPodAutoscaler %s: %w", hpa, err)
	}
	s.HPADesired, s.HPACurrent = h.Status.DesiredReplicas, h.Status.CurrentReplicas
	s.HPAReason, s.HPAMessage = lastDecision(h)
	return s, nil
}

// lastDecision gives the autoscaler's reasons (AbleToScale, ScalingActive, and ScalingLimited when it
// limits) and the message of AbleToScale, its own words for what it did last.
func lastDecision(h *autoscalingv2.HorizontalPodAutoscaler) (reasons, message string) {
	var parts []string
	for _, t := range []autoscalingv2.HorizontalPodAutoscalerConditionType{autoscalingv2.AbleToScale, autoscalingv2.ScalingActive, autoscalingv2.ScalingLimited} {
		for _, c := range h.Status.Conditions {
			if c.Type != t || (t == autoscalingv2.ScalingLimited && c.Status != corev1.ConditionTrue) {
				continue
			}
			parts = append(parts, c.Reason)
			if t == autoscalingv2.AbleToScale {
				message = c.Message
			}
		}
	}
	return strings.Join(parts, "/"), message
}

// PodLoad renders per-pod targets as "pod-0=100 pod-1=93".
func (s Snapshot) PodLoad() string {
	pods := make([]string, 0, len(s.PodTargets))
	for pod := range s.PodTargets {
		pods = append(pods, pod)
	}
	sort.Slice(pods, func(i, j int) bool {
		if len(pods[i]) != len(pods[j]) {
			return len(pods[i]) < len(pods[j])
		}
		return pods[i] < pods[j]
	})
	parts := make([]string, 0, len(pods))
	for _, pod := range pods {
		parts = append(parts, fmt.Sprintf("%s=%d", pod[strings.LastIndex(pod, "-")+1:], s.PodTargets[pod]))
	}
	return strings.Join(parts, " ")
}
