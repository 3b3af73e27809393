package monitoring

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"unsafe"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	// What manager.go wires into the operator: every package whose init registers metrics on the registry the
	// operator serves (controller-runtime's metrics.Registry) is imported by one of these.
	_ "github.com/gnmic-operator/gnmic-operator/controllers/balancer"
	_ "github.com/gnmic-operator/gnmic-operator/controllers/cluster"
	_ "github.com/gnmic-operator/gnmic-operator/controllers/collector"
	_ "github.com/gnmic-operator/gnmic-operator/controllers/sharding"
	_ "github.com/gnmic-operator/gnmic-operator/metricsadapter"
	_ "github.com/gnmic-operator/gnmic-operator/pushendpoint"
)

// metricType is what a family's samples are named after: a histogram's family f is scraped as f_bucket (with
// le), f_sum and f_count.
type metricType int

const (
	plain metricType = iota // counter, gauge, untyped: the family's name
	histogram
	summary
)

// family is one metric family the operator's /metrics serves: its name, type and label names.
type family struct {
	name   string
	typ    metricType
	labels map[string]bool
}

// inventory is every family the operator serves, by name.
type inventory map[string]*family

// operatorInventory lists the families registered on the operator's registry, with their label names, from
// the registered collectors' descriptors: a vector appears with its labels before its first sample (a
// counter of handover overlaps has none until the first overlap), which a scrape would not show.
func operatorInventory(t *testing.T) inventory {
	t.Helper()
	collectors, err := registeredCollectors(metrics.Registry)
	if err != nil {
		t.Fatal(err)
	}
	inv := inventory{}
	for _, c := range collectors {
		types := collectedTypes(c)
		descs := make(chan *prometheus.Desc, 1024)
		go func() { c.Describe(descs); close(descs) }()
		for d := range descs {
			name, labels, err := parseDesc(d.String())
			if err != nil {
				t.Fatal(err)
			}
			typ, seen := types[name]
			if !seen {
				typ = typeOfCollector(c)
			}
			inv[name] = &family{name: name, typ: typ, labels: labels}
		}
	}
	if len(inv) == 0 {
		t.Fatal("the operator's registry holds no metric family")
	}
	return inv
}

// registeredCollectors reads the collectors of a client_golang Registry. The Registry does not list them,
// so its fields are read directly; a client_golang upgrade that changes them fails here, loudly.
func registeredCollectors(g prometheus.Gatherer) ([]prometheus.Collector, error) {
	reg, ok := g.(*prometheus.Registry)
	if !ok {
		return nil, fmt.Errorf("the operator's registry is a %T, not a *prometheus.Registry", g)
	}
	v := reflect.ValueOf(reg).Elem()
	field := func(name string) (reflect.Value, error) {
		f := v.FieldByName(name)
		if !f.IsValid() {
			return reflect.Value{}, fmt.Errorf("prometheus.Registry has no field %s any more: update registeredCollectors", name)
		}
		return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem(), nil
	}
	byID, err := field("collectorsByID")
	if err != nil {
		return nil, err
	}
	unchecked, err := field("uncheckedCollectors")
	if err != nil {
		return nil, err
	}
	var out []prometheus.Collector
	iter := byID.MapRange()
	for iter.Next() {
		out = append(out, iter.Value().Interface().(prometheus.Collector))
	}
	for i := 0; i < unchecked.Len(); i++ {
		out = append(out, unchecked.Index(i).Interface().(prometheus.Collector))
	}
	return out, nil
}

// collectedTypes is the type of every family the collector has samples of now.
func collectedTypes(c prometheus.Collector) map[string]metricType {
	ch := make(chan prometheus.Metric, 1024)
	go func() { c.Collect(ch); close(ch) }()
	types := map[string]metricType{}
	for m := range ch {
		name, _, err := parseDesc(m.Desc().String())
		if err != nil {
			continue
		}
		var pb dto.Metric
		if m.Write(&pb) != nil {
			continue
		}
		switch {
		case pb.Histogram != nil:
			types[name] = histogram
		case pb.Summary != nil:
			types[name] = summary
		default:
			types[name] = plain
		}
	}
	return types
}

// typeOfCollector is the type of a vector without samples yet.
func typeOfCollector(c prometheus.Collector) metricType {
	switch c.(type) {
	case *prometheus.HistogramVec, prometheus.Histogram:
		return histogram
	case *prometheus.SummaryVec, prometheus.Summary:
		return summary
	default:
		return plain
	}
}

// parseDesc reads the name and label names (constant and variable) out of a Desc's String():
// Desc{fqName: "x", help: "…", unit: "", constLabels: {a="1"}, variableLabels: {b,c(d)}}.
func parseDesc(s string) (string, map[string]bool, error) {
	const prefix = `Desc{fqName: "`
	if !strings.HasPrefix(s, prefix) {
		return "", nil, fmt.Errorf("unexpected descriptor %q", s)
	}
	name := s[len(prefix):]
	name = name[:strings.IndexByte(name, '"')]
	labels := map[string]bool{}
	ci, vi := strings.LastIndex(s, ", constLabels: {"), strings.LastIndex(s, ", variableLabels: {")
	if ci < 0 || vi < ci || !strings.HasSuffix(s, "}}") {
		return "", nil, fmt.Errorf("unexpected descriptor %q", s)
	}
	for _, pair := range splitNonEmpty(strings.TrimSuffix(s[ci+len(", constLabels: {"):vi], "}")) {
		labels[pair[:strings.IndexByte(pair, '=')]] = true
	}
	for _, l := range splitNonEmpty(strings.TrimSuffix(s[vi+len(", variableLabels: {"):], "}}")) {
		labels[strings.TrimSuffix(strings.TrimPrefix(l, "c("), ")")] = true
	}
	return name, labels, nil
}

func splitNonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// sample resolves a series name as a query writes it (a histogram's f_bucket, say) to its family and the
// label names its samples carry.
func (inv inventory) sample(name string) (*family, map[string]bool, bool) {
	if f, ok := inv[name]; ok && f.typ == plain {
		return f, f.labels, true
	}
	if f, ok := inv[name]; ok && f.typ == summary {
		return f, with(f.labels, "quantile"), true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		f, ok := inv[strings.TrimSuffix(name, suffix)]
		if !ok || !strings.HasSuffix(name, suffix) || f.typ == plain || (suffix == "_bucket" && f.typ != histogram) {
			continue
		}
		if suffix == "_bucket" {
			return f, with(f.labels, "le"), true
		}
		return f, f.labels, true
	}
	return nil, nil, false
}

func with(labels map[string]bool, extra string) map[string]bool {
	out := map[string]bool{extra: true}
	for l := range labels {
		out[l] = true
	}
	return out
}

func TestTheInventoryHoldsTheOperatorsOwnFamiliesWithTheirLabels(t *testing.T) {
	inv := operatorInventory(t)
	// Vectors without a sample in this process, and a collector that reads the cache at scrape time: the
	// descriptors, not a scrape, are what makes them visible.
	for name, labels := range map[string][]string{
		"gnmic_cluster_handover_overlaps_total":        {"namespace", "cluster"},
		"gnmic_cluster_unassigned_targets":             {"namespace", "cluster"},
		"gnmic_collector_targets":                      {"namespace", "cluster", "pod"},
		"gnmic_operator_shard_owned":                   {"kind"},
		"gnmic_collector_config_push_duration_seconds": {"result"},
		"controller_runtime_reconcile_time_seconds":    {"controller"},
		"workqueue_depth":                              {"controller", "name"},
	} {
		f, ok := inv[name]
		if !ok {
			t.Errorf("%s is not in the inventory", name)
			continue
		}
		if !containsAll(f.labels, labels) {
			var got []string
			for l := range f.labels {
				got = append(got, l)
			}
			sort.Strings(got)
			t.Errorf("%s has labels %v, want %v among them", name, got, labels)
		}
	}
	if f := inv["gnmic_collector_config_push_duration_seconds"]; f != nil && f.typ != histogram {
		t.Errorf("gnmic_collector_config_push_duration_seconds is not a histogram")
	}
}

func containsAll(have map[string]bool, want []string) bool {
	for _, l := range want {
		if !have[l] {
			return false
		}
	}
	return true
}
