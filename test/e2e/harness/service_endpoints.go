package harness

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// EmulateEndpointSlices keeps the EndpointSlices of every Service of namespace that selects pods, over the
// pods matching selector, until ctx ends: kube-controller-manager's endpoint slice controller cannot list the
// harness's pods, whose IPs are loopback addresses that slice validation refuses. The slices are those the
// operator's own pods get (endpointSlices): each selected pod with its IP and Ready condition, the Service's
// ports resolved against the pods' container ports. Scenarios use it to check where a Service routes.
func (cp *ControlPlane) EmulateEndpointSlices(ctx context.Context, namespace string, selector labels.Selector) error {
	endpoints := newEndpointSlices(cp.Clientset, namespace, cp.log)
	pods := informers.NewSharedInformerFactoryWithOptions(cp.Clientset, 0, informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector.String() }))
	services := informers.NewSharedInformerFactoryWithOptions(cp.Clientset, 0, informers.WithNamespace(namespace))
	podInformer, serviceInformer := pods.Core().V1().Pods().Informer(), services.Core().V1().Services().Informer()
	trigger := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { endpoints.trigger() },
		UpdateFunc: func(any, any) { endpoints.trigger() },
		DeleteFunc: func(any) { endpoints.trigger() },
	}
	for _, i := range []cache.SharedIndexInformer{podInformer, serviceInformer} {
		if _, err := i.AddEventHandler(trigger); err != nil {
			return fmt.Errorf("watch %s: %w", namespace, err)
		}
	}
	pods.Start(ctx.Done())
	services.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), podInformer.HasSynced, serviceInformer.HasSynced) {
		return fmt.Errorf("informers of %s did not sync", namespace)
	}
	endpoints.pods, endpoints.services = podInformer.GetIndexer(), serviceInformer.GetIndexer()
	go endpoints.run(ctx)
	return nil
}
