package targetsource

import (
	"context"
	"fmt"
	"maps"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/owned"
	"github.com/gnmic-operator/gnmic-operator/internal/targetsync"
)

// listChunk is the page size of the Target list: a namespace of 10,000 Targets is read in 20 requests, not
// one response of tens of megabytes.
const listChunk = 500

// namespaceTargets are the Targets of a TargetSource's namespace, as the sync core sees them and as read.
type namespaceTargets struct {
	existing []targetsync.Existing
	byName   map[string]*operatorv1alpha1.Target
}

// listTargets reads every Target of the TargetSource's namespace from the API server: its own, to compare,
// and the others, to report conflicts. A fresh read, not the cache: a sync right after a handover must see the
// writes of the replica before.
func (r *Reconciler) listTargets(ctx context.Context, ts *operatorv1alpha1.TargetSource) (namespaceTargets, error) {
	nt := namespaceTargets{byName: map[string]*operatorv1alpha1.Target{}}
	opts := []client.ListOption{client.InNamespace(ts.Namespace), client.Limit(listChunk)}
	for {
		var list operatorv1alpha1.TargetList
		if err := r.APIReader.List(ctx, &list, opts...); err != nil {
			return nt, fmt.Errorf("list the Targets of namespace %s: %w", ts.Namespace, err)
		}
		for i := range list.Items {
			t := &list.Items[i]
			nt.byName[t.Name] = t
			nt.existing = append(nt.existing, existingOf(t, ts))
		}
		if list.Continue == "" {
			return nt, nil
		}
		opts = []client.ListOption{client.InNamespace(ts.Namespace), client.Limit(listChunk), client.Continue(list.Continue)}
	}
}

// existingOf is a Target as the sync core sees it: owned when the TargetSource (this one, by UID) is its
// controller, or when it has no controller and its owner annotation hands it to the TargetSource
// (docs/security.md, "Ownership"); its labels without the TargetSource's own.
func existingOf(t *operatorv1alpha1.Target, ts *operatorv1alpha1.TargetSource) targetsync.Existing {
	handed := metav1.GetControllerOfNoCopy(t) == nil &&
		t.Annotations[owned.OwnerAnnotation] == owned.OwnerValue("TargetSource", ts.Name)
	e := targetsync.Existing{
		Name:    t.Name,
		Owned:   metav1.IsControlledBy(t, ts) || handed,
		Handed:  handed,
		Address: t.Spec.Address,
		Profile: t.Spec.Profile,
		Tags:    t.Spec.Tags,
	}
	if len(t.Labels) > 0 {
		e.Labels = maps.Clone(t.Labels)
		delete(e.Labels, operatorv1alpha1.TargetSourceLabel)
	}
	if since, err := strconv.ParseInt(t.Annotations[operatorv1alpha1.MissingSinceAnnotation], 10, 64); err == nil && since > 0 {
		e.MissingSince = since
	}
	return e
}

// newTarget is the Target a desired one is created as: owned by the TargetSource and labelled with its name.
func newTarget(ts *operatorv1alpha1.TargetSource, d targetsync.Desired) *operatorv1alpha1.Target {
	t := &operatorv1alpha1.Target{ObjectMeta: metav1.ObjectMeta{Namespace: ts.Namespace, Name: d.Name,
		OwnerReferences: []metav1.OwnerReference{ownerReference(ts)},
		Annotations:     owned.OwnerAnnotations("TargetSource", ts.Name)}}
	render(t, ts, d)
	return t
}

// render sets what the TargetSource owns of a Target: its labels, spec, and no missing mark.
func render(t *operatorv1alpha1.Target, ts *operatorv1alpha1.TargetSource, d targetsync.Desired) {
	labels := maps.Clone(d.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[operatorv1alpha1.TargetSourceLabel] = ts.Name
	t.Labels = labels
	t.Spec = operatorv1alpha1.TargetSpec{Address: d.Address, Profile: d.Profile, Tags: d.Tags}
	delete(t.Annotations, operatorv1alpha1.MissingSinceAnnotation)
}

// ownerReference makes the TargetSource its Targets' controller: deleting it deletes them (garbage
// collection, in the background), and no other TargetSource takes them over. It does not block the owner's
// deletion: that would need update on targetsources/finalizers where OwnerReferencesPermissionEnforcement runs
// (OpenShift), for a foreground deletion nobody needs.
func ownerReference(ts *operatorv1alpha1.TargetSource) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: operatorv1alpha1.GroupVersion.String(),
		Kind:       "TargetSource",
		Name:       ts.Name,
		UID:        ts.UID,
		Controller: ptr.To(true),
	}
}

// takeOver gives a Target handed to the TargetSource (no controller, its owner annotation naming it) the
// TargetSource's controller reference; a Target it controls already is left as it is.
func takeOver(t *operatorv1alpha1.Target, ts *operatorv1alpha1.TargetSource) {
	if metav1.GetControllerOfNoCopy(t) == nil {
		t.OwnerReferences = append(t.OwnerReferences, ownerReference(ts))
	}
}
