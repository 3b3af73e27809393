package shardfence

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gnmic-operator/gnmic-operator/test/fakecollector"
)

func TestViolations(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 23, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	push := func(cluster, member string, generation int64, s int) Push {
		return Push{Cluster: cluster, Pod: cluster + "-0", Member: member, Generation: generation, At: at(s)}
	}
	tests := []struct {
		name   string
		pushes []Push
		since  time.Time
		want   []string // a substring of each violation, in order
	}{
		{name: "one owner", pushes: []Push{push("c", "a", 1, 0), push("c", "a", 1, 1)}},
		{name: "a handover", pushes: []Push{push("c", "a", 1, 0), push("c", "b", 2, 1), push("c", "b", 2, 2)}},
		{
			// A Cluster that goes back to a member it left is fenced at a newer generation: no violation,
			// though the member pushes again after another had pushed.
			name:   "a handover back",
			pushes: []Push{push("c", "a", 1, 0), push("c", "b", 2, 1), push("c", "a", 3, 2)},
		},
		{name: "clusters apart", pushes: []Push{push("c", "a", 1, 0), push("d", "b", 1, 1), push("c", "a", 1, 2)}},
		{
			name:   "the old owner after the new one",
			pushes: []Push{push("c", "a", 1, 0), push("c", "b", 2, 1), push("c", "a", 1, 2)},
			want:   []string{"a pushed to c/c-0 at generation 1 after generation 2"},
		},
		{
			name:   "two members at one generation",
			pushes: []Push{push("c", "a", 1, 0), push("c", "b", 1, 1)},
			want:   []string{"b pushed to c/c-0 at generation 1, which is a's"},
		},
		{
			name:   "a push outside the fence",
			pushes: []Push{push("c", "a", 1, 0), push("c", "a", 0, 1)},
			want:   []string{"a pushed to c/c-0 without a fence generation"},
		},
		{
			// What came before since is not reported, yet sets the generation later pushes are judged by.
			name:   "since",
			pushes: []Push{push("c", "a", 1, 0), push("c", "b", 2, 1), push("c", "a", 1, 2), push("c", "a", 1, 4)},
			since:  at(3),
			want:   []string{"a pushed to c/c-0 at generation 1 after generation 2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Violations(tt.pushes, tt.since)
			if len(got) != len(tt.want) {
				t.Fatalf("Violations = %q, want %d matching %q", got, len(tt.want), tt.want)
			}
			for i := range got {
				if !strings.Contains(got[i], tt.want[i]) {
					t.Errorf("violation %d = %q, want it to say %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestFromRequestsReadsThePOSTsMemberAndGeneration(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 23, 0, 0, 0, time.UTC)
	reqs := []fakecollector.Request{
		{Time: t0, Method: http.MethodGet, Header: http.Header{"User-Agent": {"gnmic-operator (member m-1)"}}},
		{Time: t0.Add(time.Second), Method: http.MethodPost, Header: http.Header{
			"User-Agent": {"gnmic-operator (member m-1)"}, GenerationHeader: {"7"}}},
		{Time: t0.Add(2 * time.Second), Method: http.MethodPost, Header: http.Header{"User-Agent": {"gnmic-operator"}}},
	}
	got := FromRequests("ns", "ns-0", reqs)
	want := []Push{
		{Cluster: "ns", Pod: "ns-0", Member: "m-1", Generation: 7, At: t0.Add(time.Second)},
		{Cluster: "ns", Pod: "ns-0", Member: "", Generation: 0, At: t0.Add(2 * time.Second)},
	}
	if len(got) != len(want) {
		t.Fatalf("FromRequests = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("push %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}
