package balancer

import (
	"context"
	"fmt"
	"strings"
	"sync"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// observedTarget is what a Balancer sees of one of its targets.
type observedTarget struct {
	spec operatorv1alpha1.BalancerTarget
	// resource is the target's resource, for example deployments.apps.
	resource schema.GroupResource
	// scale is the target's scale subresource as read; nil when the Balancer leaves the target alone.
	scale *autoscalingv1.Scale
	pods  podCount
	// problem says why the Balancer leaves the target alone, or why writing its scale failed; nil when
	// neither.
	problem *targetProblem
}

// targetProblem is a Balanced condition reason and the message that explains it for one target.
type targetProblem struct {
	reason, message string
}

// balanced tells whether the target takes part in the balance: its scale was read and no other autoscaler
// scales it.
func (t *observedTarget) balanced() bool { return t.scale != nil }

// observe reads every target of the Balancer: which HPA scales it, its scale subresource, its pods. A target
// that cannot be read is reported, not an error; an error is what a retry may fix (the pod list failed).
func (r *Reconciler) observe(ctx context.Context, b *operatorv1alpha1.Balancer) ([]observedTarget, error) {
	var hpas autoscalingv2.HorizontalPodAutoscalerList
	// Read only: the cache's own objects, without copies.
	if err := r.List(ctx, &hpas, client.InNamespace(b.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list horizontal pod autoscalers: %w", err)
	}
	podSelector, _ := specSelector(b.Spec.Selector) // an invalid one is reported by balancedCondition
	out := make([]observedTarget, 0, len(b.Spec.Targets))
	for _, spec := range b.Spec.Targets {
		t := observedTarget{spec: spec}
		ref := spec.ScaleTargetRef
		if hpa := hpaScaling(hpas.Items, ref); hpa != "" {
			t.problem = &targetProblem{operatorv1alpha1.ReasonScaledByOtherHPA, fmt.Sprintf(
				"HorizontalPodAutoscaler %q scales %s %q itself: remove it, or the target from the Balancer", hpa, ref.Kind, ref.Name)}
			out = append(out, t)
			continue
		}
		t.resource, t.scale, t.problem = r.readScale(ctx, b.Namespace, ref)
		if t.scale != nil {
			pods, err := r.targetPods(ctx, b.Namespace, t.scale.Status.Selector)
			if err != nil {
				return nil, fmt.Errorf("list pods of %s %q: %w", ref.Kind, ref.Name, err)
			}
			t.pods = countPods(pods, podSelector)
			t.pods.selectorMissing = t.scale.Status.Selector == ""
		}
		out = append(out, t)
	}
	return out, nil
}

// hpaScaling is the name of an HPA that scales the workload, or "".
func hpaScaling(hpas []autoscalingv2.HorizontalPodAutoscaler, ref operatorv1alpha1.ScaleTargetReference) string {
	for i := range hpas {
		if scalesTarget(&hpas[i], ref) {
			return hpas[i].Name
		}
	}
	return ""
}

// readScale finds the target's resource and reads its scale subresource, or says why it cannot.
func (r *Reconciler) readScale(ctx context.Context, namespace string, ref operatorv1alpha1.ScaleTargetReference) (
	schema.GroupResource, *autoscalingv1.Scale, *targetProblem) {
	what := fmt.Sprintf("%s %q", ref.Kind, ref.Name)
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return schema.GroupResource{}, nil, &targetProblem{operatorv1alpha1.ReasonTargetMissing,
			fmt.Sprintf("%s: apiVersion %q: %v", what, ref.APIVersion, err)}
	}
	mapping, err := r.Mapper.RESTMapping(schema.GroupKind{Group: gv.Group, Kind: ref.Kind}, gv.Version)
	if err != nil {
		if meta.IsNoMatchError(err) {
			return schema.GroupResource{}, nil, &targetProblem{operatorv1alpha1.ReasonTargetMissing,
				fmt.Sprintf("%s: the API server serves no kind %s in %s", what, ref.Kind, ref.APIVersion)}
		}
		return schema.GroupResource{}, nil, &targetProblem{operatorv1alpha1.ReasonScaleFailed, fmt.Sprintf("%s: %v", what, err)}
	}
	gr := mapping.Resource.GroupResource()
	// Discovery first: the API server answers a request for a subresource the operator may not read with 403,
	// whether the subresource exists or not, and the operator is granted no kind without one.
	hasScale, err := r.scaleSubresources.has(r.Discovery, mapping.Resource)
	if err != nil {
		return gr, nil, &targetProblem{operatorv1alpha1.ReasonScaleFailed, fmt.Sprintf("%s: discover %s: %v", what, gr, err)}
	}
	if !hasScale {
		return gr, nil, &targetProblem{operatorv1alpha1.ReasonNoScaleSubresource,
			fmt.Sprintf("%s: %s have no scale subresource", what, gr)}
	}
	s, err := r.Scales.Scales(namespace).Get(ctx, gr, ref.Name, metav1.GetOptions{})
	switch {
	case err == nil:
		return gr, s, nil
	case apierrors.IsNotFound(err):
		return gr, nil, &targetProblem{operatorv1alpha1.ReasonTargetMissing, fmt.Sprintf("%s not found", what)}
	case apierrors.IsForbidden(err):
		return gr, nil, &targetProblem{operatorv1alpha1.ReasonScaleForbidden, forbiddenScale(what, gr, "get")}
	default:
		return gr, nil, &targetProblem{operatorv1alpha1.ReasonScaleFailed, fmt.Sprintf("%s: read scale: %v", what, err)}
	}
}

// scaleSubresources remembers the resources that discovery says serve a scale subresource. Only a yes is
// remembered: a kind that gains one (a CRD updated) is seen at the next look, one that loses it answers 404.
type scaleSubresources struct {
	known sync.Map // schema.GroupVersionResource → struct{}
}

// has tells whether the resource serves a scale subresource, asking discovery unless it is known to.
func (s *scaleSubresources) has(disco discovery.ServerResourcesInterface, gvr schema.GroupVersionResource) (bool, error) {
	if _, ok := s.known.Load(gvr); ok {
		return true, nil
	}
	list, err := disco.ServerResourcesForGroupVersion(gvr.GroupVersion().String())
	if err != nil {
		return false, err
	}
	for _, res := range list.APIResources {
		if res.Name == gvr.Resource+"/scale" {
			s.known.Store(gvr, struct{}{})
			return true, nil
		}
	}
	return false, nil
}

// forbiddenScale says which grant the operator lacks.
func forbiddenScale(what string, gr schema.GroupResource, verb string) string {
	group := gr.Group
	if group == "" {
		group = `""`
	}
	return fmt.Sprintf("%s: the operator may not %s %s/scale: grant its ServiceAccount get and update on "+
		"resource %s/scale of API group %s (docs/balancer.md#permissions)", what, verb, gr, gr.Resource, group)
}

// targetPods lists the pods the target's scale selector matches. A scale without a selector (a Cluster
// before its first status) has no pods to count: an empty selector would match every pod.
func (r *Reconciler) targetPods(ctx context.Context, namespace, selector string) ([]corev1.Pod, error) {
	if strings.TrimSpace(selector) == "" {
		return nil, nil
	}
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, fmt.Errorf("parse scale selector %q: %w", selector, err)
	}
	var pods corev1.PodList
	if err := r.APIReader.List(ctx, &pods, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, err
	}
	return pods.Items, nil
}
