package controllers_test

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/endpoints/request"
	clientfeatures "k8s.io/client-go/features"
)

// permission is what RBAC authorizes a request by: its verb on a resource (or subresource, as
// "pods/status") of an API group.
type permission struct {
	verb, group, resource string
}

func (p permission) String() string {
	group := p.group
	if group == "" {
		group = "core"
	}
	return fmt.Sprintf("%s %s/%s", p.verb, group, p.resource)
}

// sentRequest is a request as RBAC sees it: the permission it needs, on an object of a namespace (both empty
// for a list, a watch or a create of a whole namespace or cluster, as RBAC reads them).
type sentRequest struct {
	permission
	namespace, name string
}

// apiRequests records every request that clients wrapped by it send to the API server, and the ones the API
// server refused with 401 or 403.
type apiRequests struct {
	mu      sync.Mutex
	sent    map[sentRequest]int
	refused []string
}

func newAPIRequests() *apiRequests { return &apiRequests{sent: map[sentRequest]int{}} }

// requestInfo reads a request's verb, resource, namespace and name as kube-apiserver's authorizer does (a
// GET with ?watch=true is a watch, a GET without a name a list, a fieldSelector on metadata.name names the
// object).
var requestInfo = &request.RequestInfoFactory{
	APIPrefixes:          sets.NewString("api", "apis"),
	GrouplessAPIPrefixes: sets.NewString("api"),
}

// listingInformers has the informers started from now on send a LIST before they watch, until the returned
// restore. client-go streams an informer's list over its watch (WatchListClient) where kube-apiserver can,
// and kube-apiserver authorizes that stream as a watch; where it cannot, or when the client feature is off,
// the informer lists. The permission to list is needed for that case, which this makes the one a test sees.
func listingInformers() (restore func()) {
	gates := clientfeatures.FeatureGates()
	clientfeatures.ReplaceFeatureGates(withoutWatchList{gates})
	return func() { clientfeatures.ReplaceFeatureGates(gates) }
}

type withoutWatchList struct{ clientfeatures.Gates }

func (g withoutWatchList) Enabled(key clientfeatures.Feature) bool {
	return key != clientfeatures.WatchListClient && g.Gates.Enabled(key)
}

// wrap is a rest.Config WrapTransport.
func (a *apiRequests) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		info, err := requestInfo.NewRequestInfo(req)
		resp, rtErr := next.RoundTrip(req)
		if err != nil || !info.IsResourceRequest {
			return resp, rtErr
		}
		r := sentRequest{permission: permission{verb: info.Verb, group: info.APIGroup, resource: info.Resource},
			namespace: info.Namespace, name: info.Name}
		if info.Subresource != "" {
			r.resource += "/" + info.Subresource
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		a.sent[r]++
		if resp != nil && (resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusUnauthorized) {
			a.refused = append(a.refused, fmt.Sprintf("%d %s %s (%s)", resp.StatusCode, req.Method, req.URL.Path, r.permission))
		}
		return resp, rtErr
	})
}

// uses tells whether a recorded request needed g: its permission, in its namespace (any for a grant of a
// ClusterRoleBinding) and, for a grant limited to names, on one of them.
func (a *apiRequests) uses(g grant) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for r := range a.sent {
		if r.permission == g.permission && (g.namespace == "" || g.namespace == r.namespace) &&
			(len(g.names) == 0 || slices.Contains(g.names, r.name)) {
			return true
		}
	}
	return false
}

// sends tells whether any recorded request needed the permission.
func (a *apiRequests) sends(p permission) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for r := range a.sent {
		if r.permission == p {
			return true
		}
	}
	return false
}

// counts are the permissions the recorded requests needed, each with how many requests needed it, sorted.
func (a *apiRequests) counts() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := map[permission]int{}
	for r, times := range a.sent {
		n[r.permission] += times
	}
	out := make([]string, 0, len(n))
	for p, times := range n {
		out = append(out, fmt.Sprintf("%s: %d", p, times))
	}
	sort.Strings(out)
	return out
}

// refusals are the requests the API server refused, in order.
func (a *apiRequests) refusals() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.refused...)
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
