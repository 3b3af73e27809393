package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
)

// OutputServiceSpec configures what the operator publishes for an Output of type prometheus, for each Cluster
// that sends to it: a Service selecting the Cluster's collector pods on the output's port
// (<cluster>-out-<output>), and, when the monitoring.coreos.com ServiceMonitor CRD is installed, a
// ServiceMonitor of that Service. The pods also name the port (prom-<output>): from their start for an output
// the Cluster sends to when its pods are created, and from the next change of their template otherwise, since
// a port name alone does not restart collectors (docs/outputs.md).
type OutputServiceSpec struct {
	// Type of the Service.
	// +kubebuilder:validation:Enum=ClusterIP;NodePort;LoadBalancer
	// +kubebuilder:default=ClusterIP
	// +optional
	Type corev1.ServiceType `json:"type,omitempty"`

	// Annotations added to the Service, for example those a load balancer controller reads.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`

	// Labels added to the Service. They cannot override the operator's labels (operator.gnmic.dev/*).
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('operator.gnmic.dev/'))",message="service labels must not set operator.gnmic.dev/ labels: the operator owns them"
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// ServiceMonitor of the Service, kept while the ServiceMonitor CRD (monitoring.coreos.com/v1) is installed.
	// On unless disabled.
	// +kubebuilder:default={}
	// +optional
	ServiceMonitor ServiceMonitorSpec `json:"serviceMonitor,omitempty"`
}

// ServiceMonitorSpec configures the ServiceMonitor of a prometheus Output's Service.
type ServiceMonitorSpec struct {
	// Enabled keeps a ServiceMonitor per Cluster that sends to the Output, named like its Service, when the
	// ServiceMonitor CRD is installed. false deletes it.
	// +kubebuilder:default=true
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

	// Interval at which Prometheus scrapes the collectors; empty uses the Prometheus' own.
	// +kubebuilder:validation:Pattern=`^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$`
	// +kubebuilder:validation:MaxLength=32
	// +optional
	Interval string `json:"interval,omitempty"`

	// Labels added to the ServiceMonitor, for the serviceMonitorSelector of a Prometheus (for example
	// release: kube-prometheus-stack). They cannot override the operator's labels (operator.gnmic.dev/*).
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('operator.gnmic.dev/'))",message="serviceMonitor labels must not set operator.gnmic.dev/ labels: the operator owns them"
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
}

// ConditionPortAvailable is a condition type of Outputs that listen (types prometheus and gnmi): True when the
// port the Output listens on is free on the collectors of every Cluster that sends to it, False (reason
// ReasonPortConflict) while on some Cluster another Output listens on it already, or the collectors' REST API
// or gNMI server does. The Output is then sent to no collector of that Cluster (with the targets and inputs
// that send to it), and status.portConflicts says where and with what.
const ConditionPortAvailable = "PortAvailable"

// Reasons of the PortAvailable condition of Outputs and of the OutputPortsAvailable condition of Clusters.
const (
	ReasonPortsFree    = "PortsFree"
	ReasonPortConflict = "PortConflict"
)

// ConditionOutputPortsAvailable is a condition type of Clusters: True when no two of the Cluster's outputs, nor
// an output and the collectors' REST API or gNMI server, listen on one port; False (reason ReasonPortConflict)
// otherwise, naming both. The Output that came later (by creation time, then name) is refused: sent to no
// collector of the Cluster.
const ConditionOutputPortsAvailable = "OutputPortsAvailable"

// ConditionServiceMonitors is a condition type of Clusters with a prometheus output whose ServiceMonitor is
// enabled: True (reason ReasonServiceMonitorsKept) when the operator keeps their ServiceMonitors, False (reason
// ReasonServiceMonitorCRDMissing) while the monitoring.coreos.com ServiceMonitor CRD is not installed. The
// Services are kept either way.
const ConditionServiceMonitors = "ServiceMonitors"

// Reasons of the ServiceMonitors condition.
const (
	ReasonServiceMonitorsKept      = "Kept"
	ReasonServiceMonitorCRDMissing = "CRDNotInstalled"
)

// Event reasons of scrapeable outputs and the gNMI server.
const (
	// EventServiceMonitorCRDMissing: a Cluster's prometheus output wants a ServiceMonitor, but the CRD is not
	// installed; raised once, when the ServiceMonitors condition starts to say so.
	EventServiceMonitorCRDMissing = "ServiceMonitorCRDMissing"
	// EventOutputPortConflict: two of the Cluster's outputs (or an output and the REST API or gNMI server)
	// listen on one port; raised once per conflict.
	EventOutputPortConflict = "OutputPortConflict"
)

// OutputServiceLabel is on every Service the operator makes for a prometheus Output and on its ServiceMonitor:
// the Service's name, so that the ServiceMonitor selects that Service alone.
const OutputServiceLabel = "operator.gnmic.dev/output-service"
