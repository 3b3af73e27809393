package fakecollector

import "testing"

func TestWithHistoryKeepsTheLastAppliesAndRequestsAndCountsEveryApply(t *testing.T) {
	c := StartForTest(t, WithHistory(2))
	for _, name := range []string{"a", "b", "c"} {
		mustApply(t, c, config(map[string]string{name: good(name, "10.0.0.1:57400")}))
	}
	if got := c.ApplyCount(); got != 3 {
		t.Errorf("ApplyCount = %d, want 3", got)
	}
	applied := c.Applied()
	if len(applied) != 2 {
		t.Fatalf("kept %d applies, want the last 2", len(applied))
	}
	if _, ok := applied[1].Config.Targets["c"]; !ok {
		t.Errorf("the last apply kept is not the last one sent: %v", applied[1].Config.Targets)
	}
	if n := len(c.Requests()); n != 2 {
		t.Errorf("kept %d requests, want the last 2", n)
	}
}
