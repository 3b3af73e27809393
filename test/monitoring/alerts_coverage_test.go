package monitoring

import (
	"os"
	"testing"

	"sigs.k8s.io/yaml"
)

// promtoolTests is the part of a promtool unit test file that says which alert is expected when.
type promtoolTests struct {
	RuleFiles []string `json:"rule_files"`
	Tests     []struct {
		Name          string `json:"name"`
		AlertRuleTest []struct {
			Alertname string           `json:"alertname"`
			ExpAlerts []map[string]any `json:"exp_alerts"`
		} `json:"alert_rule_test"`
	} `json:"tests"`
}

func TestEveryAlertHasAPromtoolCaseWhereItFiresAndOneWhereItDoesNot(t *testing.T) {
	data, err := os.ReadFile("alerts_test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var tests promtoolTests
	if err := yaml.Unmarshal(data, &tests); err != nil {
		t.Fatal(err)
	}
	fires, silent := map[string]int{}, map[string]int{}
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname]++
			} else {
				silent[a.Alertname]++
			}
		}
	}
	alerts := map[string]bool{}
	for _, q := range alertQueries(t) {
		name := q.where[len("alert "):]
		alerts[name] = true
		if fires[name] == 0 {
			t.Errorf("%s: no promtool case where it fires", name)
		}
		if silent[name] == 0 {
			t.Errorf("%s: no promtool case where it does not fire", name)
		}
	}
	for name := range fires {
		if !alerts[name] {
			t.Errorf("alerts_test.yaml expects %s, which config/prometheus/alerts.yaml does not define", name)
		}
	}
	if len(tests.RuleFiles) != 1 || tests.RuleFiles[0] != "gnmic-operator.rules.yaml" {
		t.Errorf("rule_files = %v, want the file make test-alerts writes: [gnmic-operator.rules.yaml]", tests.RuleFiles)
	}
}
