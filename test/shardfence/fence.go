// Package shardfence checks, from the requests fake collectors received, that a sharded operator's fence held:
// every request that changes a collector (a POST) carries the ownership generation of the reconcile that sent
// it (sharding.GenerationHeader), and no Cluster's collectors receive one of an older generation after one of
// a newer, or one generation from two members. A Cluster that goes back to a member it left is fenced at a
// newer generation, so its pushes are no violation, though they follow another member's.
package shardfence

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gnmic-operator/gnmic-operator/controllers/sharding"
	"github.com/gnmic-operator/gnmic-operator/test/fakecollector"
)

// GenerationHeader is the header the operator's pushes carry their fence generation in.
const GenerationHeader = sharding.GenerationHeader

// Push is one request that changes a collector: to which Cluster's pod, from which member (its User-Agent), at
// which fence generation (0: the request carried none), when the collector received it.
type Push struct {
	Cluster, Pod, Member string
	Generation           int64
	At                   time.Time
}

// FromRequests is the pushes among a collector's requests, in the order received.
func FromRequests(cluster, pod string, reqs []fakecollector.Request) []Push {
	var out []Push
	for _, req := range reqs {
		if req.Method != http.MethodPost {
			continue
		}
		generation, _ := strconv.ParseInt(req.Header.Get(GenerationHeader), 10, 64)
		out = append(out, Push{Cluster: cluster, Pod: pod, Member: MemberOf(req.Header.Get("User-Agent")),
			Generation: generation, At: req.Time})
	}
	return out
}

// MemberOf is the member a User-Agent names (collector.MemberUserAgent), or "" when it names none.
func MemberOf(userAgent string) string {
	_, member, _ := strings.Cut(strings.TrimSuffix(userAgent, ")"), "(member ")
	return member
}

// Violations lists the pushes received at or after since that break the fence, judged in the order received:
// one without a generation, one of a generation older than a push the Cluster's collectors received before,
// and one of a generation another member pushed at. Pushes before since are not reported but set what later
// ones are judged by.
func Violations(pushes []Push, since time.Time) []string {
	pushes = append([]Push(nil), pushes...)
	sort.SliceStable(pushes, func(i, j int) bool { return pushes[i].At.Before(pushes[j].At) })
	newest := map[string]int64{}             // cluster → the newest generation pushed at
	members := map[string]map[int64]string{} // cluster → generation → the member that pushed at it
	var out []string
	for _, p := range pushes {
		report := !p.At.Before(since)
		where := fmt.Sprintf("%s pushed to %s/%s", p.Member, p.Cluster, p.Pod)
		when := p.At.Format(time.StampMilli)
		if p.Generation == 0 {
			if report {
				out = append(out, fmt.Sprintf("%s without a fence generation, at %s", where, when))
			}
			continue
		}
		if members[p.Cluster] == nil {
			members[p.Cluster] = map[int64]string{}
		}
		if other, ok := members[p.Cluster][p.Generation]; ok && other != p.Member && report {
			out = append(out, fmt.Sprintf("%s at generation %d, which is %s's, at %s", where, p.Generation, other, when))
		} else if !ok {
			members[p.Cluster][p.Generation] = p.Member
		}
		if p.Generation < newest[p.Cluster] && report {
			out = append(out, fmt.Sprintf("%s at generation %d after generation %d, at %s", where, p.Generation,
				newest[p.Cluster], when))
		}
		newest[p.Cluster] = max(newest[p.Cluster], p.Generation)
	}
	return out
}
