package workload

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
)

// ScrapedOutput is a prometheus output that a Cluster's collectors run, as the Cluster publishes it: a named
// container port on every collector pod, a Service and, when enabled and possible, a ServiceMonitor.
type ScrapedOutput struct {
	// Name of the Output.
	Name string
	// Port the output listens on.
	Port int32
	// Path the metrics are served at (the output's path, /metrics unless set); Scheme is https when the output
	// serves TLS (its config has tls), http otherwise.
	Path, Scheme string
	// Service is the Output's spec.service, defaulted.
	Service v1alpha1.OutputServiceSpec
}

// defaultMetricsPath is where gNMIc's prometheus output serves metrics unless its path is set.
const defaultMetricsPath = "/metrics"

// ScrapedOutputs are the prometheus outputs among rendered (the outputs the collectors are sent, by name),
// sorted by name, with the settings of their Output in outputs. An output whose listening port cannot be told
// (gnmic.OutputListenPort) publishes nothing.
func ScrapedOutputs(rendered map[string]map[string]any, outputs map[string]*v1alpha1.Output) []ScrapedOutput {
	var out []ScrapedOutput
	for name, cfg := range rendered {
		if typ, _ := cfg["type"].(string); typ != "prometheus" {
			continue
		}
		port, ok := gnmic.OutputListenPort(cfg)
		if !ok {
			continue
		}
		s := ScrapedOutput{Name: name, Port: port, Path: defaultMetricsPath, Scheme: "http"}
		if p, _ := cfg["path"].(string); p != "" {
			s.Path = p
		}
		if tls, _ := cfg["tls"].(map[string]any); tls != nil {
			s.Scheme = "https"
		}
		if o := outputs[name]; o != nil && o.Spec.Service != nil {
			s.Service = *o.Spec.Service.DeepCopy()
		}
		if s.Service.Type == "" {
			s.Service.Type = corev1.ServiceTypeClusterIP
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ServiceMonitorEnabled tells whether the output wants a ServiceMonitor: unless spec.service.serviceMonitor
// .enabled is false.
func (s ScrapedOutput) ServiceMonitorEnabled() bool {
	e := s.Service.ServiceMonitor.Enabled
	return e == nil || *e
}

// OutputPortName names the container port and Service port of the output named output. A port name must be
// an IANA service name: at most 15 characters, lower-case letters, digits and single dashes, with a letter.
// An output name that fits, "prom-" prepended, gives a readable name ("prom-metrics"); any other gives "p-"
// and the first 13 hex digits of its SHA-256. The two forms never meet (the second character differs), and
// neither is "rest" or "gnmi".
func OutputPortName(output string) string {
	if readable := "prom-" + output; len(validation.IsValidPortName(readable)) == 0 {
		return readable
	}
	return "p-" + hashOf(output)[:13]
}

// OutputServiceName is the name of the Service (and ServiceMonitor) of output on c: <cluster>-out-<output>
// when that is a valid Service name (a DNS-1035 label of at most 63 characters); otherwise its first
// characters, made valid, then "-" and 10 hex digits of the SHA-256 of cluster and output, so that a long or
// dotted name still gives one name of its own. "-out-" keeps the names apart from the Cluster's other
// Services (<cluster>, <cluster>-gnmi).
func OutputServiceName(c *v1alpha1.Cluster, output string) string {
	name := c.Name + "-out-" + output
	if len(validation.IsDNS1035Label(name)) == 0 {
		return name
	}
	const hashLen = 10
	prefix := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, strings.ToLower(name))
	if prefix == "" || prefix[0] < 'a' || prefix[0] > 'z' {
		prefix = "o" + prefix
	}
	prefix = strings.TrimRight(prefix[:min(len(prefix), validation.DNS1035LabelMaxLength-hashLen-1)], "-")
	return prefix + "-" + hashOf(c.Name + "/" + output)[:hashLen]
}

func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// OutputServiceLabels are the labels of the Service and ServiceMonitor of output on c: Labels(c) and
// v1alpha1.OutputServiceLabel (the Service's name), which the ServiceMonitor selects the Service by.
func OutputServiceLabels(c *v1alpha1.Cluster, output string) map[string]string {
	l := Labels(c)
	l[v1alpha1.OutputServiceLabel] = OutputServiceName(c, output)
	return l
}

// OutputService selects the collector pods of c on the port the output listens on. The Service's port is the
// output's port, named OutputPortName, and targets it by number: pods started before the output existed have
// no container port of that name, but their collector listens all the same. spec.service's labels and
// annotations are added; the operator's labels win.
func OutputService(c *v1alpha1.Cluster, s ScrapedOutput) *corev1.Service {
	labels := maps.Clone(s.Service.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, OutputServiceLabels(c, s.Name))
	return &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: OutputServiceName(c, s.Name), Namespace: c.Namespace, Labels: labels,
			Annotations: maps.Clone(s.Service.Annotations)},
		Spec: corev1.ServiceSpec{
			Type:     s.Service.Type,
			Selector: Labels(c),
			Ports: []corev1.ServicePort{{
				Name: OutputPortName(s.Name), Port: s.Port, TargetPort: intstr.FromInt32(s.Port), Protocol: corev1.ProtocolTCP,
			}},
		},
	}
}

// ServiceMonitorGVK is the kind of prometheus-operator's ServiceMonitor.
var ServiceMonitorGVK = schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "ServiceMonitor"}

// OutputServiceMonitor is the ServiceMonitor of the output's Service, of the same name: it selects that
// Service alone (by v1alpha1.OutputServiceLabel, in c's namespace) and scrapes its port at the output's path
// and scheme, every spec.service.serviceMonitor.interval when set. It is unstructured, so that the operator
// needs no prometheus-operator module and runs where the CRD is not installed.
func OutputServiceMonitor(c *v1alpha1.Cluster, s ScrapedOutput) *unstructured.Unstructured {
	labels := map[string]any{}
	for k, v := range s.Service.ServiceMonitor.Labels {
		labels[k] = v
	}
	for k, v := range OutputServiceLabels(c, s.Name) {
		labels[k] = v
	}
	endpoint := map[string]any{"port": OutputPortName(s.Name), "path": s.Path, "scheme": s.Scheme}
	if s.Service.ServiceMonitor.Interval != "" {
		endpoint["interval"] = s.Service.ServiceMonitor.Interval
	}
	sm := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": OutputServiceName(c, s.Name), "namespace": c.Namespace, "labels": labels},
		"spec": map[string]any{
			"selector":          map[string]any{"matchLabels": map[string]any{v1alpha1.OutputServiceLabel: OutputServiceName(c, s.Name)}},
			"namespaceSelector": map[string]any{"matchNames": []any{c.Namespace}},
			"endpoints":         []any{endpoint},
		},
	}}
	sm.SetGroupVersionKind(ServiceMonitorGVK)
	return sm
}

// outputContainerPorts are the named container ports of the scraped outputs, in their order.
func outputContainerPorts(outputs []ScrapedOutput) []corev1.ContainerPort {
	var ports []corev1.ContainerPort
	for _, s := range outputs {
		ports = append(ports, corev1.ContainerPort{Name: OutputPortName(s.Name), ContainerPort: s.Port, Protocol: corev1.ProtocolTCP})
	}
	return ports
}

// OutputContainerPorts are the container ports of the collector container of sts other than the REST API's and
// the gNMI and tunnel servers': those of its outputs.
func OutputContainerPorts(sts *appsv1.StatefulSet) []corev1.ContainerPort {
	var out []corev1.ContainerPort
	for _, c := range sts.Spec.Template.Spec.Containers {
		if c.Name != ContainerName {
			continue
		}
		for _, p := range c.Ports {
			if p.Name != RestPortName && p.Name != GNMIPortName && p.Name != TunnelPortName {
				out = append(out, p)
			}
		}
	}
	return out
}

// SetOutputContainerPorts replaces the output container ports of the collector container of sts with ports.
func SetOutputContainerPorts(sts *appsv1.StatefulSet, ports []corev1.ContainerPort) {
	for i := range sts.Spec.Template.Spec.Containers {
		c := &sts.Spec.Template.Spec.Containers[i]
		if c.Name != ContainerName {
			continue
		}
		var kept []corev1.ContainerPort
		for _, p := range c.Ports {
			if p.Name == RestPortName || p.Name == GNMIPortName || p.Name == TunnelPortName {
				kept = append(kept, p)
			}
		}
		c.Ports = append(kept, ports...)
	}
}
