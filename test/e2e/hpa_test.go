//go:build e2e

package e2e_test

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

// autoscaling is an HPA recipe of docs/metrics.md with an explicit behaviour.
type autoscaling struct {
	minReplicas, maxReplicas int32
	// overflow adds unassigned_targets at Value 1 (recipe 2) to targets_demand (recipe 1).
	overflow bool
	// scaleUpPods is the most pods added per scaleUpPeriod seconds.
	scaleUpPods, scaleUpPeriod int32
	// scaleDownWindow is the scale-down stabilization window in seconds; one pod goes per 15 s after it.
	scaleDownWindow int32
}

// demandPlusOverflow is recipe 2 of docs/metrics.md: targets_demand at AverageValue = podCapacity is the
// floor, unassigned_targets at Value 1 reacts to any overflow. The overflow metric asks for far more pods
// than needed while any target is unassigned, so the scale-up policy (2 pods per 30 s) bounds each step.
func demandPlusOverflow(f harness.Fleet, minReplicas, maxReplicas int32, stabilizationWindow int32) *autoscalingv2.HorizontalPodAutoscaler {
	return autoscaler(f, autoscaling{minReplicas: minReplicas, maxReplicas: maxReplicas, overflow: true,
		scaleUpPods: 2, scaleUpPeriod: 30, scaleDownWindow: stabilizationWindow})
}

func autoscaler(f harness.Fleet, a autoscaling) *autoscalingv2.HorizontalPodAutoscaler {
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"cluster": f.Cluster}}
	minReplicas, stabilizationWindow := a.minReplicas, a.scaleDownWindow
	hpa := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.Namespace, Name: f.Cluster},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "operator.gnmic.dev/v1alpha1", Kind: "Cluster", Name: f.Cluster},
			MinReplicas:    &minReplicas,
			MaxReplicas:    a.maxReplicas,
			Metrics: []autoscalingv2.MetricSpec{
				{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
					Metric: autoscalingv2.MetricIdentifier{Name: "targets_demand", Selector: selector},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: resource.NewQuantity(int64(f.PodCapacity), resource.DecimalSI)},
				}},
				{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
					Metric: autoscalingv2.MetricIdentifier{Name: "unassigned_targets", Selector: selector},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: resource.NewQuantity(1, resource.DecimalSI)},
				}},
			},
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
				ScaleUp: &autoscalingv2.HPAScalingRules{
					StabilizationWindowSeconds: ptr.To[int32](0),
					SelectPolicy:               ptr.To(autoscalingv2.MaxChangePolicySelect),
					Policies:                   []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: a.scaleUpPods, PeriodSeconds: a.scaleUpPeriod}},
				},
				ScaleDown: &autoscalingv2.HPAScalingRules{
					StabilizationWindowSeconds: &stabilizationWindow,
					SelectPolicy:               ptr.To(autoscalingv2.MaxChangePolicySelect),
					Policies:                   []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 1, PeriodSeconds: 15}},
				},
			},
		},
	}
	if !a.overflow {
		hpa.Spec.Metrics = hpa.Spec.Metrics[:1]
	}
	return hpa
}

// minimalReplicas is the fewest pods that place every target.
func minimalReplicas(targets, podCapacity int) int32 {
	return int32((targets + podCapacity - 1) / podCapacity)
}
