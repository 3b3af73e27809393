package monitoring

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"
)

const (
	alertsFile    = "../../config/prometheus/alerts.yaml"
	dashboardFile = "../../config/grafana/gnmic-operator-dashboard.json"
)

// targetLabels are the labels Prometheus adds to every series of a target that config/prometheus/monitor.yaml
// makes (honorLabels keeps the operator's own namespace and pod where a series has them), and all that the
// synthetic series up carries.
var targetLabels = map[string]bool{"job": true, "instance": true, "namespace": true, "pod": true, "service": true,
	"endpoint": true, "container": true}

// prometheusSeries are series Prometheus makes for each scraped target itself.
var prometheusSeries = map[string]bool{"up": true}

// external lists, with their label names, the series of other exporters that the dashboard may read: the
// HorizontalPodAutoscaler's view, which only kube-state-metrics exports. A panel reading one must say so
// in its description (externalMarker).
var external = map[string][]string{
	"kube_horizontalpodautoscaler_status_desired_replicas": {"namespace", "horizontalpodautoscaler"},
	"kube_horizontalpodautoscaler_status_current_replicas": {"namespace", "horizontalpodautoscaler"},
	"kube_horizontalpodautoscaler_spec_max_replicas":       {"namespace", "horizontalpodautoscaler"},
	"kube_horizontalpodautoscaler_spec_min_replicas":       {"namespace", "horizontalpodautoscaler"},
}

const externalMarker = "kube-state-metrics"

// promql parses as Prometheus 3.16 does by default.
var promql = parser.NewParser(parser.Options{})

// checker judges queries against the families the operator registers.
type checker struct{ inv inventory }

// labelsOf returns the label names a series of this name carries once scraped, and whether the name is one.
func (c checker) labelsOf(name string) (map[string]bool, bool) {
	if prometheusSeries[name] {
		return targetLabels, true
	}
	if l, ok := external[name]; ok {
		out := map[string]bool{}
		for k := range targetLabels {
			out[k] = true
		}
		for _, k := range l {
			out[k] = true
		}
		return out, true
	}
	_, l, ok := c.inv.sample(name)
	if !ok {
		return nil, false
	}
	out := map[string]bool{}
	for k := range targetLabels {
		out[k] = true
	}
	for k := range l {
		out[k] = true
	}
	return out, true
}

// check parses a query and returns every problem: a series the operator does not export, a label a series
// does not carry, a by/without/on/ignoring/group_left label that no series below it carries.
func (c checker) check(query string) (names []string, problems []string) {
	expr, err := promql.ParseExpr(query)
	if err != nil {
		return nil, []string{fmt.Sprintf("does not parse: %v", err)}
	}
	var selectors int
	parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
		switch n := node.(type) {
		case *parser.VectorSelector:
			selectors++
			name := n.Name
			for _, m := range n.LabelMatchers {
				if m.Name == labels.MetricName && m.Type == labels.MatchEqual {
					name = m.Value
				}
			}
			if name == "" {
				problems = append(problems, fmt.Sprintf("selector %s names no series", n))
				return nil
			}
			names = append(names, name)
			have, ok := c.labelsOf(name)
			if !ok {
				problems = append(problems, fmt.Sprintf("%s is not a series the operator exports", name))
				return nil
			}
			for _, m := range n.LabelMatchers {
				if m.Name != labels.MetricName && !have[m.Name] {
					problems = append(problems, fmt.Sprintf("%s has no label %q", name, m.Name))
				}
			}
		case *parser.AggregateExpr:
			problems = append(problems, c.checkLabelsBelow(n.Expr, "by/without", n.Grouping)...)
		case *parser.BinaryExpr:
			if n.VectorMatching != nil {
				problems = append(problems, c.checkLabelsBelow(n, "on/ignoring", n.VectorMatching.MatchingLabels)...)
				problems = append(problems, c.checkLabelsBelow(n, "group_left/group_right", n.VectorMatching.Include)...)
			}
		}
		return nil
	})
	if selectors == 0 {
		problems = append(problems, "reads no series")
	}
	return names, problems
}

// checkLabelsBelow reports each label that no series selected under node carries.
func (c checker) checkLabelsBelow(node parser.Node, clause string, wanted []string) []string {
	carried := map[string]bool{}
	parser.Inspect(node, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			have, _ := c.labelsOf(vs.Name)
			for l := range have {
				carried[l] = true
			}
		}
		return nil
	})
	var problems []string
	for _, l := range wanted {
		if !carried[l] {
			problems = append(problems, fmt.Sprintf("%s label %q is carried by no series it groups", clause, l))
		}
	}
	return problems
}

// grafanaVariable matches the dashboard's template variables in a query: $name, ${name}, ${name:format}.
var grafanaVariable = regexp.MustCompile(`\$\{?(__rate_interval|__interval|__range|[A-Za-z_][A-Za-z0-9_]*)(:[a-z]+)?\}?`)

// expand replaces the dashboard's variables by values that parse: durations for Grafana's interval
// variables, a word for the template variables (they only stand in label values).
func expand(query string) string {
	return grafanaVariable.ReplaceAllStringFunc(query, func(v string) string {
		switch strings.Trim(v, "${}") {
		case "__rate_interval", "__interval", "__range":
			return "5m"
		default:
			return "x"
		}
	})
}

// labelValues matches a Grafana template variable's query label_values(selector, label).
var labelValues = regexp.MustCompile(`^\s*label_values\((.*),\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*$`)

type query struct {
	where, expr string
	// panelDescription is the description of the dashboard panel the query is in.
	panelDescription string
	// label is the label a template variable lists the values of.
	label string
}

type rulesManifest struct {
	Spec struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Alert  string `json:"alert"`
				Record string `json:"record"`
				Expr   string `json:"expr"`
			} `json:"rules"`
		} `json:"groups"`
	} `json:"spec"`
}

func alertQueries(t *testing.T) []query {
	t.Helper()
	data, err := os.ReadFile(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	var m rulesManifest
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	var out []query
	for _, g := range m.Spec.Groups {
		for _, r := range g.Rules {
			out = append(out, query{where: "alert " + r.Alert + r.Record, expr: r.Expr})
		}
	}
	return out
}

type grafanaPanel struct {
	Title       string `json:"title"`
	Type        string `json:"type"`
	Description string `json:"description"`
	Targets     []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
	Panels []grafanaPanel `json:"panels"`
}

type grafanaDashboard struct {
	Title      string         `json:"title"`
	UID        string         `json:"uid"`
	Panels     []grafanaPanel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string          `json:"name"`
			Type  string          `json:"type"`
			Query json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

func dashboardQueries(t *testing.T) []query {
	t.Helper()
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d grafanaDashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	var out []query
	var walk func(panels []grafanaPanel)
	walk = func(panels []grafanaPanel) {
		for _, p := range panels {
			if p.Type != "row" && len(p.Targets) == 0 {
				t.Errorf("panel %q has no query", p.Title)
			}
			for _, target := range p.Targets {
				out = append(out, query{where: "panel " + p.Title, expr: target.Expr, panelDescription: p.Description})
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q string
		if json.Unmarshal(v.Query, &q) != nil {
			var obj struct {
				Query string `json:"query"`
			}
			if err := json.Unmarshal(v.Query, &obj); err != nil {
				t.Fatalf("variable %s: %v", v.Name, err)
			}
			q = obj.Query
		}
		m := labelValues.FindStringSubmatch(q)
		if m == nil {
			t.Errorf("variable %s: query %q is not label_values(selector, label)", v.Name, q)
			continue
		}
		out = append(out, query{where: "variable " + v.Name, expr: m[1], label: m[2]})
	}
	return out
}

func TestEveryAlertAndDashboardQueryReadsOnlySeriesAndLabelsTheOperatorExports(t *testing.T) {
	c := checker{inv: operatorInventory(t)}
	alerts, panels := alertQueries(t), dashboardQueries(t)
	if len(alerts) < 6 || len(panels) < 10 {
		t.Fatalf("found %d alert and %d dashboard queries: the files were not read as expected", len(alerts), len(panels))
	}
	used := map[string]bool{}
	for _, q := range append(alerts, panels...) {
		names, problems := c.check(expand(q.expr))
		if q.label != "" && len(names) == 1 {
			if have, _ := c.labelsOf(names[0]); !have[q.label] {
				problems = append(problems, fmt.Sprintf("%s has no label %q to list", names[0], q.label))
			}
		}
		for _, name := range names {
			used[name] = true
			if _, ext := external[name]; ext && !strings.Contains(q.panelDescription, externalMarker) {
				problems = append(problems, fmt.Sprintf("reads %s but its panel's description does not say it comes from %s", name, externalMarker))
			}
		}
		for _, p := range problems {
			t.Errorf("%s: %s\n\tquery: %s", q.where, p, strings.TrimSpace(q.expr))
		}
	}
	var names []string
	for n := range used {
		names = append(names, n)
	}
	sort.Strings(names)
	t.Logf("%d alert and %d dashboard queries read %d series: %s", len(alerts), len(panels), len(names), strings.Join(names, ", "))
}

func TestTheCheckerRefusesWhatTheOperatorDoesNotExport(t *testing.T) {
	c := checker{inv: operatorInventory(t)}
	for _, tc := range []struct{ query, problem string }{
		{`gnmic_cluster_unassigned_target > 0`, "is not a series the operator exports"},
		{`gnmic_cluster_unassigned_targets{clustr="edge"}`, `has no label "clustr"`},
		{`max by (pod) (gnmic_cluster_unassigned_targets{cluster="a"}) `, ""},
		{`max by (state) (gnmic_cluster_unassigned_targets)`, `by/without label "state"`},
		{`gnmic_cluster_targets * on (namespace, cluster) group_left (reason) gnmic_cluster_pods`, `group_left/group_right label "reason"`},
		{`gnmic_cluster_targets_bucket`, "is not a series the operator exports"},
		{`histogram_quantile(0.9, sum by (le) (rate(gnmic_collector_config_push_duration_seconds_bucket[5m])))`, ""},
		{`gnmic_collector_config_push_duration_seconds_bucket{cluster="edge"}`, `has no label "cluster"`},
		{`kube_horizontalpodautoscaler_status_desired_replicas{horizontalpodautoscaler="edge"}`, ""},
		{`kube_horizontalpodautoscaler_status_desired_replicas{cluster="edge"}`, `has no label "cluster"`},
		{`kube_deployment_status_replicas`, "is not a series the operator exports"},
		{`up{job="gnmic-operator"}`, ""},
		{`vector(1)`, "reads no series"},
		{`sum(rate(gnmic_cluster_target_moves_total[5m]`, "does not parse"},
	} {
		_, problems := c.check(tc.query)
		joined := strings.Join(problems, "; ")
		if tc.problem == "" && joined != "" {
			t.Errorf("%s: refused (%s), want accepted", tc.query, joined)
		}
		if tc.problem != "" && !strings.Contains(joined, tc.problem) {
			t.Errorf("%s: problems %q, want one containing %q", tc.query, joined, tc.problem)
		}
	}
}

func TestTheDashboardsVariablesExpandToQueriesThatParse(t *testing.T) {
	for in, want := range map[string]string{
		`rate(x{namespace=~"$namespace"}[$__rate_interval])`: `rate(x{namespace=~"x"}[5m])`,
		`x{cluster=~"${cluster:regex}", namespace="${ns}"}`:  `x{cluster=~"x", namespace="x"}`,
	} {
		if got := expand(in); got != want {
			t.Errorf("expand(%s) = %s, want %s", in, got, want)
		}
	}
}
