package pushendpoint

import (
	"github.com/prometheus/client_golang/prometheus"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// Results of a post, the values of the result label.
const (
	resultApplied          = "applied"            // stored: the snapshot changed
	resultUnchanged        = "unchanged"          // authenticated and valid, the records as they were
	resultUnauthenticated  = "unauthenticated"    // 401
	resultTooLarge         = "too_large"          // 413: the body, or the snapshot once compressed
	resultInvalid          = "invalid"            // 400
	resultNotFound         = "not_found"          // 404: no such TargetSource, or not a path of the endpoint
	resultNotPush          = "not_push"           // 409: the TargetSource's provider is not push
	resultConflict         = "conflict"           // 409: the snapshot's ConfigMap belongs to someone else
	resultMethodNotAllowed = "method_not_allowed" // 405
	resultUnsupported      = "unsupported_media"  // 415
	resultError            = "error"              // 500: the API server failed
)

// postsTotal counts posts by TargetSource and result. A post naming no existing push TargetSource is counted
// without its namespace and name: whoever posts must not be able to create series at will.
var postsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "gnmic_targetsource_push_posts_total",
	Help: "Posts received by the TargetSource push endpoint, by TargetSource and result (applied, unchanged, " +
		"unauthenticated, too_large, invalid, not_found, not_push, conflict, method_not_allowed, unsupported_media, error).",
}, []string{"namespace", "targetsource", "result"})

func init() {
	metrics.Registry.MustRegister(postsTotal)
}

// sourceResults are the results a post to an existing push TargetSource can have: its series start at 0.
var sourceResults = []string{resultApplied, resultUnchanged, resultUnauthenticated, resultTooLarge, resultInvalid,
	resultConflict, resultUnsupported, resultError}

// postSeries keeps each push TargetSource's series from its creation, at 0 (a counter that appeared only with
// its first increment would hide that increment from increase() and from alerts), to its deletion, when they
// are removed.
type postSeries struct{}

func (postSeries) OnAdd(obj any, _ bool) { postSeries{}.OnUpdate(nil, obj) }

func (postSeries) OnUpdate(_, obj any) {
	ts, ok := obj.(*operatorv1alpha1.TargetSource)
	if !ok {
		return
	}
	if ts.Spec.Push == nil {
		postSeries{}.OnDelete(ts)
		return
	}
	for _, result := range sourceResults {
		postsTotal.WithLabelValues(ts.Namespace, ts.Name, result)
	}
}

func (postSeries) OnDelete(obj any) {
	if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if ts, ok := obj.(*operatorv1alpha1.TargetSource); ok {
		postsTotal.DeletePartialMatch(prometheus.Labels{"namespace": ts.Namespace, "targetsource": ts.Name})
	}
}
