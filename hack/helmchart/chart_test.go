package main

import (
	"strings"
	"testing"
)

// install is a minimal config/default: its Namespace, a Deployment as config/manager's, and the metrics
// API objects the generator must find.
const install = `apiVersion: v1
kind: Namespace
metadata:
  name: ops-system
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: gnmic-operator-controller-manager
  namespace: ops-system
spec:
  replicas: 2
  selector:
    matchLabels:
      app: x
  template:
    metadata:
      labels:
        app: x
    spec:
      containers:
      - name: manager
        image: example.com/op:v1
        args: [--leader-elect, --metrics-bind-address=:8443]
        resources:
          limits:
            cpu: "1"
---
apiVersion: v1
kind: Service
metadata:
  name: gnmic-operator-metrics-api
  namespace: ops-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: gnmic-operator-metrics-adapter-auth-reader
  namespace: kube-system
subjects:
- kind: ServiceAccount
  name: gnmic-operator-controller-manager
  namespace: ops-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: gnmic-operator-metrics-adapter-reader
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: gnmic-operator-metrics-adapter-hpa-reader
`

func TestGenerateRefusesWhatTheChartWouldGetWrong(t *testing.T) {
	cases := []struct {
		name     string
		install  string
		optional []string
		want     string
	}{
		{"no --leader-elect for sharding to replace", strings.Replace(install, "--leader-elect, ", "", 1), nil, "lack --leader-elect"},
		{"a metrics API object renamed", strings.Replace(install, "name: gnmic-operator-metrics-api\n", "name: gnmic-operator-metrics\n", 1), nil,
			"Service/gnmic-operator-metrics-api"},
		{"no Namespace", install[strings.Index(install, "---\n")+4:], nil, "no Namespace"},
		{"a second container", strings.Replace(install, "      - name: manager\n", "      - name: sidecar\n        image: a:b\n      - name: manager\n", 1), nil,
			"2 containers"},
		{"no resources", strings.Replace(install, "        resources:\n          limits:\n            cpu: \"1\"\n", "", 1), nil, "no resources"},
		{"a node selector the value would replace", strings.Replace(install, "      containers:\n", "      nodeSelector: {a: b}\n      containers:\n", 1), nil,
			"sets nodeSelector"},
		{"an optional object of another kind", install, []string{"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dashboards\n"},
			"only PrometheusRule and ServiceMonitor can be optional"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var optional [][]byte
			for _, o := range tc.optional {
				optional = append(optional, []byte(o))
			}
			_, err := generate([]byte(tc.install), optional, "1.0.0")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("generate: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// A string that holds template delimiters (an alert's Prometheus templates) is escaped, not refused: Helm
// renders it as it was.
func TestGenerateEscapesTemplateDelimitersOfTheObjects(t *testing.T) {
	withNote := strings.Replace(install, "name: gnmic-operator-metrics-adapter-reader",
		"name: gnmic-operator-metrics-adapter-reader\n  annotations: {note: '{{ $labels.x }}}'}", 1)
	c, err := generate([]byte(withNote), nil, "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	want := "{{`{{`}} $labels.x {{`}}`}}"
	for _, content := range c.files {
		if strings.Contains(string(content), want) {
			return
		}
	}
	t.Fatalf("no template holds the escaped annotation %q", want)
}

func TestGenerateTemplatesTheValues(t *testing.T) {
	c, err := generate([]byte(install), nil, "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	deployment := string(c.files["templates/manager/deployment-controller-manager.yaml"])
	for _, want := range []string{
		"  namespace: '{{ .Release.Namespace }}'\n",
		"  replicas: {{ .Values.replicas }}\n",
		"    {{- include \"gnmic-operator.labels\" . | nindent 4 }}\n",
		"      - args:\n        {{- if .Values.sharding.enabled }}\n        - --sharding\n        {{- else }}\n        - --leader-elect\n        {{- end }}\n        - \"--metrics-bind-address=:8443\"\n",
		"        image: '{{ .Values.image.repository }}:{{ .Values.image.tag }}'\n",
		"        resources: {{- toYaml .Values.resources | nindent 10 }}\n",
		"      {{- with .Values.nodeSelector }}\n      nodeSelector: {{- toYaml . | nindent 8 }}\n      {{- end }}\n",
	} {
		if !strings.Contains(deployment, want) {
			t.Errorf("the Deployment's template lacks %q:\n%s", want, deployment)
		}
	}
	binding := string(c.files["templates/metrics-api/rolebinding-kube-system-metrics-adapter-auth-reader.yaml"])
	if !strings.HasPrefix(binding, generatedHeader+"{{- if .Values.metricsAPI.enabled }}\n") || !strings.HasSuffix(binding, "{{- end }}\n") ||
		!strings.Contains(binding, "  namespace: kube-system\n") || !strings.Contains(binding, "  namespace: '{{ .Release.Namespace }}'\n") {
		t.Errorf("the metrics API's kube-system binding is not gated, or its namespaces are wrong:\n%s", binding)
	}
	values := string(c.files["values.yaml"])
	for _, want := range []string{"  repository: example.com/op\n", "  tag: v1\n", "replicas: 2\n", "    cpu: \"1\"\n"} {
		if !strings.Contains(values, want) {
			t.Errorf("values.yaml lacks %q (the defaults are config/'s):\n%s", want, values)
		}
	}
	if strings.Contains(values, "monitoring") {
		t.Errorf("values.yaml offers monitoring switches without monitoring objects:\n%s", values)
	}
}

func TestGenerateGatesOptionalComponentsBehindTheirValues(t *testing.T) {
	serviceMonitor := "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata:\n  name: gnmic-operator-metrics\n  namespace: ops-system\n"
	rule := "apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata:\n  name: gnmic-operator-alerts\n  namespace: ops-system\n"
	c, err := generate([]byte(install), [][]byte{[]byte(serviceMonitor + "---\n" + rule)}, "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	for path, condition := range map[string]string{
		"templates/monitoring/servicemonitor-metrics.yaml": ".Values.monitoring.serviceMonitor.enabled",
		"templates/monitoring/prometheusrule-alerts.yaml":  ".Values.monitoring.prometheusRule.enabled",
	} {
		text := string(c.files[path])
		if !strings.HasPrefix(text, generatedHeader+"{{- if "+condition+" }}\n") || !strings.Contains(text, "namespace: '{{ .Release.Namespace }}'") {
			t.Errorf("%s is not behind %s in the release namespace:\n%s", path, condition, text)
		}
	}
	values := string(c.files["values.yaml"])
	if !strings.Contains(values, "monitoring:\n") || !strings.Contains(values, "  serviceMonitor:\n") ||
		!strings.Contains(values, "  prometheusRule:\n") || strings.Count(values, "    enabled: false\n") != 2 {
		t.Errorf("values.yaml lacks the monitoring switches, off:\n%s", values)
	}
}
