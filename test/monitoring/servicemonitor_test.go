package monitoring

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

type service struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Ports []struct {
			Name       string `json:"name"`
			TargetPort any    `json:"targetPort"`
		} `json:"ports"`
	} `json:"spec"`
}

type serviceMonitor struct {
	Spec struct {
		JobLabel string `json:"jobLabel"`
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
		Endpoints []struct {
			Port        string `json:"port"`
			HonorLabels bool   `json:"honorLabels"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// The alerts select the operator's series by job="gnmic-operator", and read the Cluster's namespace and the
// collector's pod from the operator's own labels: the ServiceMonitor must make exactly those, from exactly
// the metrics Service of config/default.
func TestTheServiceMonitorScrapesOnlyTheMetricsServiceAsTheJobTheAlertsName(t *testing.T) {
	data, err := os.ReadFile("../../config/prometheus/monitor.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var monitor serviceMonitor
	if err := yaml.Unmarshal(data, &monitor); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("../../config/default/*.yaml")
	var selected []service
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var s service
		if yaml.Unmarshal(data, &s) != nil || s.Kind != "Service" {
			continue
		}
		match := true
		for k, v := range monitor.Spec.Selector.MatchLabels {
			match = match && s.Metadata.Labels[k] == v
		}
		if match {
			selected = append(selected, s)
		}
	}
	if len(selected) != 1 || selected[0].Metadata.Name != "controller-manager-metrics-service" {
		var names []string
		for _, s := range selected {
			names = append(names, s.Metadata.Name)
		}
		t.Fatalf("the ServiceMonitor selects Services %v of config/default, want only controller-manager-metrics-service", names)
	}
	metrics := selected[0]
	if len(monitor.Spec.Endpoints) != 1 || !monitor.Spec.Endpoints[0].HonorLabels {
		t.Fatalf("want one endpoint with honorLabels: %+v", monitor.Spec.Endpoints)
	}
	port := false
	for _, p := range metrics.Spec.Ports {
		port = port || (p.Name == monitor.Spec.Endpoints[0].Port && p.TargetPort == "metrics")
	}
	if !port {
		t.Errorf("the metrics Service has no port %q to the container's metrics port", monitor.Spec.Endpoints[0].Port)
	}
	job := metrics.Metadata.Labels[monitor.Spec.JobLabel]
	if job == "" {
		t.Fatalf("the metrics Service has no label %q for the job", monitor.Spec.JobLabel)
	}
	jobs := regexp.MustCompile(`job="([^"]*)"`)
	var queries []query
	queries = append(queries, alertQueries(t)...)
	queries = append(queries, dashboardQueries(t)...)
	for _, q := range queries {
		for _, m := range jobs.FindAllStringSubmatch(q.expr, -1) {
			if m[1] != job {
				t.Errorf("%s selects job=%q, but the ServiceMonitor's job is %q\n\tquery: %s", q.where, m[1], job, strings.TrimSpace(q.expr))
			}
		}
	}
}
