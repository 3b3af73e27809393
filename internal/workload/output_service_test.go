package workload

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

func TestOutputPortName(t *testing.T) {
	tests := []struct{ output, want string }{
		{"metrics", "prom-metrics"},
		{"prom", "prom-prom"},
		{"a1", "prom-a1"},
		{"0123456789", "prom-0123456789"},
		// Too long, dotted, or with a double dash: hashed.
		{"0123456789a", "p-" + hashOf("0123456789a")[:13]},
		{"prom.metrics", "p-" + hashOf("prom.metrics")[:13]},
		{"a--b", "p-" + hashOf("a--b")[:13]},
	}
	for _, tt := range tests {
		if got := OutputPortName(tt.output); got != tt.want {
			t.Errorf("OutputPortName(%q) = %q, want %q", tt.output, got, tt.want)
		}
	}
}

// outputNames are random valid Output names (DNS subdomains): short and long, with dashes and dots.
func outputNames(n int) []string {
	rng := rand.New(rand.NewPCG(29, 2))
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789-."
	names := map[string]bool{}
	for len(names) < n {
		length := 1 + rng.IntN(12)
		if rng.IntN(4) == 0 {
			length = 1 + rng.IntN(253)
		}
		b := make([]byte, length)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		name := string(b)
		if len(validation.IsDNS1123Subdomain(name)) == 0 {
			names[name] = true
		}
	}
	out := make([]string, 0, n)
	for name := range names {
		out = append(out, name)
	}
	return out
}

func TestOutputPortNamesAreValidDistinctAndNeverTheOperatorsOwn(t *testing.T) {
	seen := map[string]string{}
	for _, name := range outputNames(5000) {
		port := OutputPortName(name)
		if errs := validation.IsValidPortName(port); len(errs) > 0 {
			t.Fatalf("OutputPortName(%q) = %q: %v", name, port, errs)
		}
		if port == RestPortName || port == GNMIPortName {
			t.Fatalf("OutputPortName(%q) = %q, a port name the operator uses", name, port)
		}
		if other, ok := seen[port]; ok {
			t.Fatalf("outputs %q and %q both get port name %q", other, name, port)
		}
		seen[port] = name
		if OutputPortName(name) != port {
			t.Fatalf("OutputPortName(%q) is not deterministic", name)
		}
	}
}

func TestOutputServiceName(t *testing.T) {
	long := strings.Repeat("x", 70)
	tests := []struct {
		cluster, output, want string
	}{
		{"lab", "metrics", "lab-out-metrics"},
		{"lab", "prom.v1", "lab-out-prom-v1-" + hashOf("lab/prom.v1")[:10]},
		{"lab", long, "lab-out-" + strings.Repeat("x", 52-len("lab-out-")) + "-" + hashOf("lab/" + long)[:10]},
		{"1lab", "m", "o1lab-out-m-" + hashOf("1lab/m")[:10]},
	}
	for _, tt := range tests {
		c := cluster(func(c *v1alpha1.Cluster) { c.Name = tt.cluster })
		if got := OutputServiceName(c, tt.output); got != tt.want {
			t.Errorf("OutputServiceName(%s, %s) = %q, want %q", tt.cluster, tt.output, got, tt.want)
		}
	}
}

func TestOutputServiceNamesAreValidAndDistinct(t *testing.T) {
	clusters := []string{"c", "lab", strings.Repeat("long-cluster-", 4) + "x"}
	seen := map[string]string{}
	for _, cn := range clusters {
		c := cluster(func(c *v1alpha1.Cluster) { c.Name = cn })
		for _, name := range outputNames(2000) {
			svc := OutputServiceName(c, name)
			if errs := validation.IsDNS1035Label(svc); len(errs) > 0 {
				t.Fatalf("OutputServiceName(%s, %q) = %q: %v", cn, name, svc, errs)
			}
			if svc == c.Name || svc == GNMIServiceName(c) {
				t.Fatalf("OutputServiceName(%s, %q) = %q, a Service the Cluster has already", cn, name, svc)
			}
			key := cn + "/" + name
			if other, ok := seen[svc]; ok {
				t.Fatalf("%s and %s both get Service %q", other, key, svc)
			}
			seen[svc] = key
		}
	}
}

func TestScrapedOutputs(t *testing.T) {
	outputs := map[string]*v1alpha1.Output{
		"lb": {Spec: v1alpha1.OutputSpec{Type: "prometheus", Service: &v1alpha1.OutputServiceSpec{
			Type: corev1.ServiceTypeLoadBalancer, Labels: map[string]string{"team": "net"}}}},
	}
	rendered := map[string]map[string]any{
		"lb":       {"type": "prometheus", "listen": ":9900", "path": "/gnmic"},
		"plain":    {"type": "prometheus"},
		"tls":      {"type": "prometheus", "listen": "0.0.0.0:9443", "tls": map[string]any{"cert-file": "/x"}},
		"unknown":  {"type": "prometheus", "listen": "$PORT"},
		"gnmi":     {"type": "gnmi", "address": ":57401"},
		"file":     {"type": "file", "filename": "/tmp/x"},
		"no-field": {"type": "prometheus", "listen": ""},
	}
	want := []ScrapedOutput{
		{Name: "lb", Port: 9900, Path: "/gnmic", Scheme: "http", Service: v1alpha1.OutputServiceSpec{
			Type: corev1.ServiceTypeLoadBalancer, Labels: map[string]string{"team": "net"}}},
		{Name: "no-field", Port: 9804, Path: "/metrics", Scheme: "http", Service: v1alpha1.OutputServiceSpec{Type: corev1.ServiceTypeClusterIP}},
		{Name: "plain", Port: 9804, Path: "/metrics", Scheme: "http", Service: v1alpha1.OutputServiceSpec{Type: corev1.ServiceTypeClusterIP}},
		{Name: "tls", Port: 9443, Path: "/metrics", Scheme: "https", Service: v1alpha1.OutputServiceSpec{Type: corev1.ServiceTypeClusterIP}},
	}
	got := ScrapedOutputs(rendered, outputs)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ScrapedOutputs:\n got %+v\nwant %+v", got, want)
	}
	outputs["lb"].Spec.Service.Labels["team"] = "changed"
	if got[0].Service.Labels["team"] != "net" {
		t.Fatalf("ScrapedOutputs shares the Output's labels")
	}
}

func TestOutputService(t *testing.T) {
	c := cluster()
	s := ScrapedOutput{Name: "metrics", Port: 9804, Path: "/metrics", Scheme: "http", Service: v1alpha1.OutputServiceSpec{
		Type:        corev1.ServiceTypeNodePort,
		Annotations: map[string]string{"lb.example/internal": "true"},
		Labels:      map[string]string{"team": "net", v1alpha1.ClusterLabel: "someone-else"},
	}}
	svc := OutputService(c, s)
	if svc.Name != "c-out-metrics" || svc.Namespace != "ns" || svc.Kind != "Service" || svc.APIVersion != "v1" {
		t.Errorf("object = %v %v/%v", svc.TypeMeta, svc.Namespace, svc.Name)
	}
	wantLabels := map[string]string{"team": "net", v1alpha1.ClusterLabel: "c", v1alpha1.OutputServiceLabel: "c-out-metrics"}
	if !reflect.DeepEqual(svc.Labels, wantLabels) {
		t.Errorf("labels = %v, want %v: the operator's win", svc.Labels, wantLabels)
	}
	if !reflect.DeepEqual(svc.Annotations, map[string]string{"lb.example/internal": "true"}) {
		t.Errorf("annotations = %v", svc.Annotations)
	}
	if svc.Spec.Type != corev1.ServiceTypeNodePort || !reflect.DeepEqual(svc.Spec.Selector, Labels(c)) {
		t.Errorf("type %s selector %v, want NodePort selecting the Cluster's pods", svc.Spec.Type, svc.Spec.Selector)
	}
	wantPorts := []corev1.ServicePort{{Name: "prom-metrics", Port: 9804, TargetPort: intstr.FromInt32(9804), Protocol: corev1.ProtocolTCP}}
	if !reflect.DeepEqual(svc.Spec.Ports, wantPorts) {
		t.Errorf("ports = %+v, want %+v", svc.Spec.Ports, wantPorts)
	}
	s.Service.Labels["team"] = "changed"
	if svc.Labels["team"] != "net" {
		t.Errorf("the Service shares the Output's labels")
	}
}

func TestOutputServiceMonitor(t *testing.T) {
	c := cluster()
	tests := []struct {
		name         string
		output       ScrapedOutput
		wantEndpoint map[string]any
		wantLabels   map[string]any
	}{
		{
			name:         "scrapes the Service's port at the output's path",
			output:       ScrapedOutput{Name: "m", Port: 9804, Path: "/metrics", Scheme: "http"},
			wantEndpoint: map[string]any{"port": "prom-m", "path": "/metrics", "scheme": "http"},
			wantLabels:   map[string]any{v1alpha1.ClusterLabel: "c", v1alpha1.OutputServiceLabel: "c-out-m"},
		},
		{
			name: "adds the interval and labels of the Output, the operator's labels winning",
			output: ScrapedOutput{Name: "m", Port: 9443, Path: "/gnmic", Scheme: "https", Service: v1alpha1.OutputServiceSpec{
				ServiceMonitor: v1alpha1.ServiceMonitorSpec{Interval: "15s",
					Labels: map[string]string{"release": "kube-prometheus-stack", v1alpha1.OutputServiceLabel: "x"}}}},
			wantEndpoint: map[string]any{"port": "prom-m", "path": "/gnmic", "scheme": "https", "interval": "15s"},
			wantLabels: map[string]any{"release": "kube-prometheus-stack", v1alpha1.ClusterLabel: "c",
				v1alpha1.OutputServiceLabel: "c-out-m"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sm := OutputServiceMonitor(c, tt.output)
			if sm.GroupVersionKind() != ServiceMonitorGVK || sm.GetName() != "c-out-m" || sm.GetNamespace() != "ns" {
				t.Errorf("object = %v %s/%s", sm.GroupVersionKind(), sm.GetNamespace(), sm.GetName())
			}
			meta := sm.Object["metadata"].(map[string]any)
			if !reflect.DeepEqual(meta["labels"], tt.wantLabels) {
				t.Errorf("labels = %v, want %v", meta["labels"], tt.wantLabels)
			}
			spec := sm.Object["spec"].(map[string]any)
			wantSpec := map[string]any{
				"selector":          map[string]any{"matchLabels": map[string]any{v1alpha1.OutputServiceLabel: "c-out-m"}},
				"namespaceSelector": map[string]any{"matchNames": []any{"ns"}},
				"endpoints":         []any{tt.wantEndpoint},
			}
			if !reflect.DeepEqual(spec, wantSpec) {
				t.Errorf("spec:\n got %v\nwant %v", spec, wantSpec)
			}
			// The selector selects the output's Service and no other.
			svc := OutputService(c, tt.output)
			if svc.Labels[v1alpha1.OutputServiceLabel] != "c-out-m" {
				t.Errorf("the Service lacks the label its ServiceMonitor selects")
			}
		})
	}
}

func TestServiceMonitorIsOnUnlessDisabled(t *testing.T) {
	off, on := false, true
	for _, tt := range []struct {
		enabled *bool
		want    bool
	}{{nil, true}, {&on, true}, {&off, false}} {
		s := ScrapedOutput{Service: v1alpha1.OutputServiceSpec{ServiceMonitor: v1alpha1.ServiceMonitorSpec{Enabled: tt.enabled}}}
		if got := s.ServiceMonitorEnabled(); got != tt.want {
			t.Errorf("enabled %v: ServiceMonitorEnabled = %v, want %v", tt.enabled, got, tt.want)
		}
	}
}

func TestCollectorPodsNameTheirScrapedOutputsPorts(t *testing.T) {
	scraped := []ScrapedOutput{{Name: "a", Port: 9804}, {Name: "b.x", Port: 9900}}
	tests := []struct {
		name    string
		cluster *v1alpha1.Cluster
		want    []corev1.ContainerPort
	}{
		{
			name: "the REST API, then each output", cluster: cluster(),
			want: []corev1.ContainerPort{
				{Name: "rest", ContainerPort: 7890, Protocol: corev1.ProtocolTCP},
				{Name: "prom-a", ContainerPort: 9804, Protocol: corev1.ProtocolTCP},
				{Name: OutputPortName("b.x"), ContainerPort: 9900, Protocol: corev1.ProtocolTCP},
			},
		},
		{
			name: "the gNMI server's port after the REST API's", cluster: cluster(withGNMIServer(0)),
			want: []corev1.ContainerPort{
				{Name: "rest", ContainerPort: 7890, Protocol: corev1.ProtocolTCP},
				{Name: "gnmi", ContainerPort: 57400, Protocol: corev1.ProtocolTCP},
				{Name: "prom-a", ContainerPort: 9804, Protocol: corev1.ProtocolTCP},
				{Name: OutputPortName("b.x"), ContainerPort: 9900, Protocol: corev1.ProtocolTCP},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sts := StatefulSet(tt.cluster, Options{ScrapedOutputs: scraped})
			if got := sts.Spec.Template.Spec.Containers[0].Ports; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ports = %+v, want %+v", got, tt.want)
			}
			if d := DomainStatefulSet(cluster(withDomains("zone-a"), func(c *v1alpha1.Cluster) { c.Spec.API = tt.cluster.Spec.API }), 0, 1,
				Options{ScrapedOutputs: scraped}); !reflect.DeepEqual(d.Spec.Template.Spec.Containers[0].Ports, tt.want) {
				t.Errorf("a domain's pods: ports = %+v, want %+v", d.Spec.Template.Spec.Containers[0].Ports, tt.want)
			}
		})
	}
}

func TestTheNetworkPolicyAdmitsThePortOfEveryOutputService(t *testing.T) {
	c := cluster(func(c *v1alpha1.Cluster) {
		c.Spec.NetworkPolicy.OutputPeers = nil
	})
	rendered := map[string]map[string]any{
		"a": {"type": "prometheus"},
		"b": {"type": "prometheus", "listen": "0.0.0.0:9900"},
	}
	np := NetworkPolicy(c, OperatorPeer{PodLabels: DefaultOperatorPodLabels()}, OutputPorts(rendered))
	for _, s := range ScrapedOutputs(rendered, nil) {
		svc := OutputService(c, s)
		admitted := false
		for _, rule := range np.Spec.Ingress {
			for _, p := range rule.Ports {
				if p.Port.IntVal == svc.Spec.Ports[0].TargetPort.IntVal && len(rule.From) == 0 {
					admitted = true
				}
			}
		}
		if !admitted {
			t.Errorf("Service %s targets port %d, which the NetworkPolicy does not admit: %+v", svc.Name,
				svc.Spec.Ports[0].TargetPort.IntVal, np.Spec.Ingress)
		}
	}
}

func TestReservedPorts(t *testing.T) {
	tests := []struct {
		cluster *v1alpha1.Cluster
		want    []int32
	}{
		{cluster(), []int32{7890}},
		{cluster(withPort(9000)), []int32{9000}},
		{cluster(withGNMIServer(0)), []int32{7890, 57400}},
		{cluster(withGNMIServer(50051)), []int32{7890, 50051}},
	}
	for i, tt := range tests {
		got := ReservedPorts(tt.cluster)
		if len(got) != len(tt.want) {
			t.Errorf("%d: ReservedPorts = %v, want %v", i, got, tt.want)
		}
		for _, p := range tt.want {
			if got[p] == "" {
				t.Errorf("%d: port %d is not reserved (%v)", i, p, got)
			}
		}
	}
}

func ExampleOutputPortName() {
	fmt.Println(OutputPortName("metrics"))
	fmt.Println(len(OutputPortName("telemetry-for-the-noc")))
	// Output:
	// prom-metrics
	// 15
}

func TestOutputContainerPortsAreReplacedAlone(t *testing.T) {
	sts := StatefulSet(cluster(withGNMIServer(0)), Options{ScrapedOutputs: []ScrapedOutput{{Name: "a", Port: 9804}}})
	if got := OutputContainerPorts(sts); !reflect.DeepEqual(got, []corev1.ContainerPort{{Name: "prom-a", ContainerPort: 9804, Protocol: corev1.ProtocolTCP}}) {
		t.Fatalf("OutputContainerPorts = %+v", got)
	}
	other := []corev1.ContainerPort{{Name: "prom-b", ContainerPort: 9900, Protocol: corev1.ProtocolTCP}}
	SetOutputContainerPorts(sts, other)
	want := []corev1.ContainerPort{
		{Name: "rest", ContainerPort: 7890, Protocol: corev1.ProtocolTCP},
		{Name: "gnmi", ContainerPort: 57400, Protocol: corev1.ProtocolTCP},
		{Name: "prom-b", ContainerPort: 9900, Protocol: corev1.ProtocolTCP},
	}
	if got := sts.Spec.Template.Spec.Containers[0].Ports; !reflect.DeepEqual(got, want) {
		t.Fatalf("ports = %+v, want %+v", got, want)
	}
	SetOutputContainerPorts(sts, nil)
	if got := OutputContainerPorts(sts); len(got) != 0 {
		t.Fatalf("OutputContainerPorts after removing them = %+v", got)
	}
}
