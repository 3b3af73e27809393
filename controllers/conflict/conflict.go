// Package conflict turns a write conflict into a prompt retry. A conflict (409) says that the cache was behind
// the API server when the reconcile read what it wrote: nothing is wrong, while an error returned to
// controller-runtime backs the next try off exponentially.
package conflict

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// RetryAfter is how soon a reconcile that met a write conflict looks again: long enough for the cache to catch
// up with the write that caused it.
const RetryAfter = 250 * time.Millisecond

// Retry is the result of a reconcile whose write failed with err: a look again after RetryAfter for a
// conflict, the error itself otherwise.
func Retry(ctx context.Context, err error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) {
		log.FromContext(ctx).V(1).Info("write conflict, looking again", "error", err.Error())
		return ctrl.Result{RequeueAfter: RetryAfter}, nil
	}
	return ctrl.Result{}, err
}
