package fakecollector

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
)

func TestApplyAnswers200WithAnEmptyBodyAndStoresTheConfig(t *testing.T) {
	c := StartForTest(t)
	a := apply(t, c, config(map[string]string{"r1": good("r1", "10.0.0.1:57400")}))
	if a.status != http.StatusOK || a.body != "" {
		t.Fatalf("got %d %q, want 200 and no body", a.status, a.body)
	}
	if got := c.Targets(); !reflect.DeepEqual(got, []string{"r1"}) {
		t.Fatalf("targets = %v, want [r1]", got)
	}
	if c.ApplyCount() != 1 {
		t.Fatalf("ApplyCount = %d, want 1", c.ApplyCount())
	}
	last, _ := c.LastApplied()
	if last.Config.Targets["r1"]["timeout"] != "10s" {
		t.Fatalf("snapshot keeps objects as sent, got timeout %v", last.Config.Targets["r1"]["timeout"])
	}
}

func TestApplyIsDeclarativeAndAnEmptyObjectResets(t *testing.T) {
	c := StartForTest(t)
	mustApply(t, c, config(map[string]string{"r1": good("r1", "a:1"), "r2": good("r2", "b:1")}))

	changes := mustApply(t, c, config(map[string]string{"r2": good("r2", "b:1")}))
	if !reflect.DeepEqual(changes.Targets.Removed, []string{"r1"}) || len(changes.Targets.Added) != 0 {
		t.Fatalf("absent target must be removed, got %+v", changes.Targets)
	}
	changes = mustApply(t, c, `{}`)
	if len(c.Targets()) != 0 {
		t.Fatalf("{} must reset, targets left: %v", c.Targets())
	}
	if !reflect.DeepEqual(changes.Subscriptions.Removed, []string{"sub1"}) {
		t.Fatalf("{} must remove subscriptions too, got %+v", changes.Subscriptions)
	}
}

func TestApplyClassifiesTargetChanges(t *testing.T) {
	base := good("r1", "10.0.0.1:57400") + `,"subscriptions":["sub1"]`
	tests := []struct {
		name            string
		next            string
		wantChanged     bool
		wantReconnected bool
	}{
		{"identical target is untouched", base, false, false},
		{"new address reconnects", good("r1", "10.0.0.9:57400") + `,"subscriptions":["sub1"]`, true, true},
		{"new password reconnects", base + `,"password":"new"`, true, true},
		{"new timeout reconnects", `"name":"r1","address":"10.0.0.1:57400","timeout":"20s","retry-timer":"10s","insecure":true,"subscriptions":["sub1"]`, true, true},
		{"new grpc keepalive reconnects", base + `,"grpc-keepalive":{"time":"10s"}`, true, true},
		{"new tags apply in place", base + `,"tags":["edge"]`, true, false},
		{"new outputs apply in place", base + `,"outputs":["o1"]`, true, false},
		{"new subscription list applies in place", good("r1", "10.0.0.1:57400"), true, false},
		{"unknown key is ignored", base + `,"no-such-field":1`, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := StartForTest(t)
			mustApply(t, c, config(map[string]string{"r1": base}))
			changes := mustApply(t, c, config(map[string]string{"r1": tt.next}))

			if got := len(changes.Targets.Changed) == 1; got != tt.wantChanged {
				t.Errorf("changed = %v, want %v (%+v)", got, tt.wantChanged, changes.Targets)
			}
			if got := len(changes.Reconnected) == 1; got != tt.wantReconnected {
				t.Errorf("reconnected = %v, want %v", got, tt.wantReconnected)
			}
			counts := c.Counts("r1")
			wantStarts := 1
			if tt.wantReconnected {
				wantStarts = 2
			}
			if counts.Added != 1 || counts.Removed != 0 || counts.Starts != wantStarts {
				t.Errorf("counts = %+v, want added once, never removed, %d starts", counts, wantStarts)
			}
		})
	}
}

func TestApplyOfObjectsWithoutNameCountsAsAChangeEveryTime(t *testing.T) {
	c := StartForTest(t)
	unnamed := `{"subscriptions":{"sub1":{"paths":["/a"]}},"targets":{"r1":{` + good("r1", "a:1") + `}}}`
	named := `{"subscriptions":{"sub1":{"name":"sub1","paths":["/a"]}},"targets":{"r1":{` + good("r1", "a:1") + `}}}`

	mustApply(t, c, unnamed)
	changes := mustApply(t, c, unnamed)
	if !reflect.DeepEqual(changes.Subscriptions.Changed, []string{"sub1"}) {
		t.Fatalf("identical apply of an unnamed subscription: changes %+v, want sub1 changed", changes.Subscriptions)
	}
	if got := c.Counts("r1").SubscriptionRestarts; got != 1 {
		t.Fatalf("the changed subscription must restart on r1, restarts = %d", got)
	}

	mustApply(t, c, named)
	if changes := mustApply(t, c, named); !changes.Empty() {
		t.Fatalf("identical apply of named objects must change nothing, got %+v", changes)
	}
}

func TestApplyRestartsAChangedSubscriptionOnlyOnTargetsThatRunIt(t *testing.T) {
	c := StartForTest(t)
	body := func(paths string) string {
		return `{"subscriptions":{"a":{"name":"a","paths":[` + paths + `]},"b":{"name":"b","paths":["/b"]}},` +
			`"targets":{"r1":{` + good("r1", "x:1") + `,"subscriptions":["a"]},` +
			`"r2":{` + good("r2", "y:1") + `,"subscriptions":["b"]},` +
			`"r3":{` + good("r3", "z:1") + `}}}`
	}
	mustApply(t, c, body(`"/a"`))
	mustApply(t, c, body(`"/a","/c"`))

	want := map[string]int{"r1": 1, "r2": 0, "r3": 1}
	for name, restarts := range want {
		if got := c.Counts(name).SubscriptionRestarts; got != restarts {
			t.Errorf("%s restarts = %d, want %d (a target without a list runs every subscription)", name, got, restarts)
		}
	}
}

func TestApplyAcceptsGzipBodies(t *testing.T) {
	c := StartForTest(t)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write([]byte(config(map[string]string{"r1": good("r1", "a:1")})))
	_ = zw.Close()

	a := call(t, http.MethodPost, c.URL()+"/api/v1/config/apply", buf.String(), "Content-Encoding", "gzip")
	if a.status != http.StatusOK {
		t.Fatalf("gzip apply: %d %s", a.status, a.body)
	}
	if got := c.Targets(); !reflect.DeepEqual(got, []string{"r1"}) {
		t.Fatalf("targets = %v", got)
	}
}

func TestATargetThatStaysIsNeverRemovedAndReAdded(t *testing.T) {
	c := StartForTest(t)
	for i := range 5 {
		others := map[string]string{"stay": good("stay", "s:1")}
		other := fmt.Sprintf("r%d", i)
		others[other] = good(other, "o:1")
		mustApply(t, c, config(others))
	}
	if got := c.Counts("stay"); got != (TargetCounts{Added: 1, Starts: 1}) {
		t.Fatalf("counts of the staying target = %+v, want added and started once", got)
	}
	if got := c.Counts("r0"); got.Added != 1 || got.Removed != 1 {
		t.Fatalf("counts of a departed target = %+v, want added and removed once", got)
	}
}

func TestConcurrentAppliesAreSerialised(t *testing.T) {
	c := StartForTest(t)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			name := fmt.Sprintf("r%d", i)
			body := config(map[string]string{name: good(name, "a:1")})
			resp, err := http.Post(c.URL()+"/api/v1/config/apply", "application/json", strings.NewReader(body))
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("apply %s: status %d", name, resp.StatusCode)
			}
		})
	}
	wg.Wait()
	if c.ApplyCount() != 20 {
		t.Fatalf("ApplyCount = %d, want 20", c.ApplyCount())
	}
	last, _ := c.LastApplied()
	if got := c.Targets(); !reflect.DeepEqual(got, last.Config.TargetNames()) {
		t.Fatalf("collector runs %v, but the last apply declared %v", got, last.Config.TargetNames())
	}
}
