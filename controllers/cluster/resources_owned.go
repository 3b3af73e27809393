package cluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/owned"
)

// namesTakenLook is how soon a Cluster blocked by a Secret of its own name that is someone else's looks again:
// a Secret without the Cluster's label wakes nothing when it goes.
const namesTakenLook = time.Minute

// namesTakenListed bounds the objects the ResourcesOwned message names.
const namesTakenListed = 10

// setResourcesOwnedCondition says whether every object the Cluster needs is the operator's, naming those that
// are someone else's, and warns once per change of them.
func (r *Reconciler) setResourcesOwnedCondition(cluster *operatorv1alpha1.Cluster, taken []owned.NameTakenError) {
	c := metav1.Condition{Type: operatorv1alpha1.ConditionResourcesOwned, Status: metav1.ConditionTrue,
		Reason: operatorv1alpha1.ReasonResourcesOwned, ObservedGeneration: cluster.Generation,
		Message: "every object the Cluster needs is the operator's"}
	if len(taken) > 0 {
		c.Status, c.Reason = metav1.ConditionFalse, operatorv1alpha1.ReasonNameTaken
		c.Message = truncate(owned.Message("Cluster", cluster.Name, taken, namesTakenListed), maxConditionMessage)
	}
	meta.SetStatusCondition(&cluster.Status.Conditions, c)
	memory := r.memoryOf(client.ObjectKeyFromObject(cluster))
	said := takenNews(taken)
	switch {
	case said == memory.saidNamesTaken:
	case said != "":
		r.Recorder.Event(cluster, corev1.EventTypeWarning, operatorv1alpha1.EventNameTaken, c.Message)
	default:
		r.Recorder.Event(cluster, corev1.EventTypeNormal, operatorv1alpha1.EventNamesFree, c.Message)
	}
	memory.saidNamesTaken = said
}

// takenNews is the objects taken, as one string to compare with what the Cluster was last warned of.
func takenNews(taken []owned.NameTakenError) string {
	parts := make([]string, 0, len(taken))
	for _, t := range taken {
		parts = append(parts, t.Kind+"/"+t.Name)
	}
	return strings.Join(parts, ",")
}

// reportCredentialsTaken writes the ResourcesOwned condition of a Cluster that cannot go on because one of
// its own Secrets (the collector API's CA and certificates, the gNMI and tunnel servers') is someone else's:
// every pod mounts them and every push is signed by them. The Cluster looks again in a minute.
func (r *Reconciler) reportCredentialsTaken(ctx context.Context, cluster *operatorv1alpha1.Cluster, taken *owned.NameTakenError) (time.Duration, error) {
	base := cluster.DeepCopy()
	r.setResourcesOwnedCondition(cluster, []owned.NameTakenError{*taken})
	if equality.Semantic.DeepEqual(base.Status, cluster.Status) {
		return namesTakenLook, nil
	}
	if err := r.Status().Patch(ctx, cluster, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return 0, fmt.Errorf("write cluster status: %w", err)
	}
	return namesTakenLook, nil
}
