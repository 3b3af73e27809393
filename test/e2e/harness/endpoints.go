package harness

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// endpointSliceManager labels the slices the emulator keeps, so that kube-controller-manager's endpoint
// slice controller leaves them alone.
const endpointSliceManager = "pod-emulator.harness.gnmic.dev"

// endpointSlices stands in for the endpoint slice controller for the emulated pods: for every Service of
// the namespace with a selector, one slice lists each selected pod with its IP and its Ready condition,
// which the emulator's readiness probes drive. The controller's own slices cannot hold these pods:
// validation refuses loopback IPs in an IPv4 slice. These are of address type FQDN, whose addresses may be
// any DNS-1123 name, a dotted IP included; kube-apiserver's aggregator routing (which is how it reaches the
// metrics API) resolves a Service through its slices, picks a random ready endpoint and dials its address,
// so an IP written as a name works as one.
type endpointSlices struct {
	client    kubernetes.Interface
	namespace string
	log       func(format string, args ...any)
	pods      cache.Indexer
	services  cache.Indexer
	changed   chan struct{}
}

func newEndpointSlices(client kubernetes.Interface, namespace string, log func(string, ...any)) *endpointSlices {
	return &endpointSlices{client: client, namespace: namespace, log: log, changed: make(chan struct{}, 1)}
}

func (s *endpointSlices) trigger() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// run brings the slices up to date after every change, retrying a failed update every second.
func (s *endpointSlices) run(ctx context.Context) {
	s.trigger()
	var retry <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.changed:
		case <-retry:
		}
		retry = nil
		if err := s.sync(ctx); err != nil && ctx.Err() == nil {
			s.log("endpoint slices of %s: %v", s.namespace, err)
			retry = time.After(time.Second)
		}
	}
}

func (s *endpointSlices) sync(ctx context.Context) error {
	wanted := map[string]*discoveryv1.EndpointSlice{}
	for _, obj := range s.services.List() {
		svc := obj.(*corev1.Service)
		if len(svc.Spec.Selector) == 0 {
			continue
		}
		wanted[svc.Name+"-emulated"] = s.desired(svc)
	}
	slices := s.client.DiscoveryV1().EndpointSlices(s.namespace)
	existing, err := slices.List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelManagedBy + "=" + endpointSliceManager})
	if err != nil {
		return fmt.Errorf("list: %w", err)
	}
	for i := range existing.Items {
		current := &existing.Items[i]
		want, ok := wanted[current.Name]
		if !ok {
			if err := slices.Delete(ctx, current.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("delete %s: %w", current.Name, err)
			}
			continue
		}
		delete(wanted, current.Name)
		if reflect.DeepEqual(current.Endpoints, want.Endpoints) && reflect.DeepEqual(current.Ports, want.Ports) {
			continue
		}
		current.Endpoints, current.Ports = want.Endpoints, want.Ports
		if _, err := slices.Update(ctx, current, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("update %s: %w", current.Name, err)
		}
	}
	for _, want := range wanted {
		if _, err := slices.Create(ctx, want, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create %s: %w", want.Name, err)
		}
	}
	return nil
}

// desired is the slice of svc: its selected pods with an IP, ready as their Ready condition, terminating
// once deleted, and the Service's ports resolved against the pods' container ports.
func (s *endpointSlices) desired(svc *corev1.Service) *discoveryv1.EndpointSlice {
	selector := labels.SelectorFromSet(svc.Spec.Selector)
	var pods []*corev1.Pod
	for _, obj := range s.pods.List() {
		pod := obj.(*corev1.Pod)
		if selector.Matches(labels.Set(pod.Labels)) && pod.Status.PodIP != "" {
			pods = append(pods, pod)
		}
	}
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: svc.Namespace, Name: svc.Name + "-emulated", Labels: map[string]string{
			discoveryv1.LabelServiceName: svc.Name, discoveryv1.LabelManagedBy: endpointSliceManager,
		}},
		AddressType: discoveryv1.AddressTypeFQDN,
		Endpoints:   []discoveryv1.Endpoint{},
		Ports:       []discoveryv1.EndpointPort{},
	}
	for _, pod := range pods {
		terminating := pod.DeletionTimestamp != nil
		ready := podIsReady(pod) && !terminating
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{pod.Status.PodIP},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready), Serving: ptr.To(podIsReady(pod)), Terminating: ptr.To(terminating)},
			NodeName:   ptr.To(pod.Spec.NodeName),
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		})
	}
	for _, port := range svc.Spec.Ports {
		number := port.TargetPort.IntVal
		if port.TargetPort.String() == "0" || port.TargetPort.String() == "" {
			number = port.Port
		}
		if name := port.TargetPort.StrVal; name != "" {
			number = 0
			for _, pod := range pods {
				for _, c := range pod.Spec.Containers {
					if n, err := containerPort(&c, name); err == nil {
						number = int32(n)
					}
				}
			}
			if number == 0 {
				continue // like the controller: a named port no pod has is left out
			}
		}
		slice.Ports = append(slice.Ports, discoveryv1.EndpointPort{Name: ptr.To(port.Name), Port: ptr.To(number), Protocol: ptr.To(port.Protocol)})
	}
	return slice
}

func podIsReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
