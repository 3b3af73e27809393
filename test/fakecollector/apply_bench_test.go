package fakecollector

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// BenchmarkApplyOneChangeOf500Targets is an apply to a collector of 500 running targets that changes one of
// them: what make profile-reconcile's one-change reconciles push to the changed pod, answered by this fake in
// the same process as the operator under the profiler.
func BenchmarkApplyOneChangeOf500Targets(b *testing.B) {
	c := StartForTest(b)
	targets := numbered("r", 500)
	for name, body := range targets {
		targets[name] = body + `,"subscriptions":["sub1"]`
	}
	post := func(body string) {
		resp, err := http.Post(c.URL()+"/api/v1/config/apply", "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		answer, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("apply: %d %s", resp.StatusCode, answer)
		}
	}
	post(config(targets))
	first := targets["r000"]
	b.ResetTimer()
	for k := range b.N {
		targets["r000"] = first + fmt.Sprintf(`,"event-tags":{"revision":"%d"}`, k)
		post(config(targets))
	}
}
