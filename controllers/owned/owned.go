// Package owned keeps the objects the operator makes for a Cluster (its StatefulSets, Service, ConfigMap,
// PodDisruptionBudget, NetworkPolicy) as the operator wants them: created when missing, updated when what the
// operator wants changed or someone changed what it sets, deleted when no longer wanted, and never written
// when nothing changed. An object of the name that the operator did not make is never written or deleted
// (ownership.go).
package owned

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

// desiredHashAnnotation records the hash of what the operator last wrote into an owned object. A field the
// operator stops setting (a nodeSelector removed from the Cluster) is no longer in what it wants, so only a
// changed hash tells that the object must be rewritten; changes to what it sets, by hand or by another tool,
// are found by workload.Drift.
const desiredHashAnnotation = "operator.gnmic.dev/desired-hash"

// Writer reads and writes owned objects.
type Writer struct {
	// Client reads the cache, which holds only objects labelled with their Cluster, and writes.
	Client client.Client
	// Live reads the API server: an object that exists without the label is not in the cache.
	Live   client.Reader
	Scheme *runtime.Scheme
	// Settled, when set, remembers the objects found holding what the operator wants, so that the same
	// version of an object is not compared with the same want again (every reconcile ensures every object).
	Settled *Settled
}

// Settled remembers, per owned object, the version last found holding everything the operator sets and the
// desired hash it was compared with. The comparison (workload.Drift) depends only on the two, so an object
// whose UID and resourceVersion are the same, compared with a want of the same hash, has not drifted. It holds
// at most maxSettled objects and starts over when full (objects of deleted Clusters are not forgotten one by one).
type Settled struct {
	mu      sync.Mutex
	objects map[settledKey]settledVersion
}

type settledKey struct {
	kind      string
	namespace string
	name      string
}

type settledVersion struct {
	uid             types.UID
	resourceVersion string
	hash            string
}

const maxSettled = 100_000

// holds tells whether have was found holding a want of that hash before, in this very version.
func (s *Settled) holds(kind string, have client.Object, hash string) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.objects[settledKey{kind, have.GetNamespace(), have.GetName()}]
	return ok && v.uid == have.GetUID() && v.resourceVersion == have.GetResourceVersion() && v.hash == hash
}

// note records that have holds a want of that hash; forget that it may not.
func (s *Settled) note(kind string, have client.Object, hash string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.objects == nil || len(s.objects) >= maxSettled {
		s.objects = map[settledKey]settledVersion{}
	}
	s.objects[settledKey{kind, have.GetNamespace(), have.GetName()}] = settledVersion{uid: have.GetUID(),
		resourceVersion: have.GetResourceVersion(), hash: hash}
}

func (s *Settled) forget(kind string, have client.Object) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.objects, settledKey{kind, have.GetNamespace(), have.GetName()})
}

// Ensure creates want, controlled by owner, or updates the existing object through copySpec when what the
// operator wants changed since it last wrote it, or when the object drifted from it (kubectl scale, kubectl
// edit). An object that holds everything the operator sets costs no write, whatever the API server or other
// tools added. have is an empty object of want's kind.
func Ensure[T client.Object](ctx context.Context, w Writer, owner client.Object, want, have T, copySpec func(have, want T)) error {
	kind := fmt.Sprintf("%T", want)
	hash, err := prepare(w, owner, want)
	if err != nil {
		return err
	}

	created, err := getOrCreate(ctx, w, want, have)
	if err != nil || created {
		return err
	}
	if err := CheckClusterOwns(owner, have, kindName(want)); err != nil {
		return err
	}
	if w.Settled.holds(kind, have, hash) {
		return nil
	}
	drift := workload.Drift(have, want)
	if len(drift) == 0 {
		w.Settled.note(kind, have, hash)
		return nil
	}
	w.Settled.forget(kind, have)
	logger := log.FromContext(ctx)
	if have.GetAnnotations()[desiredHashAnnotation] == hash {
		logger.Info("restoring what was changed by hand", "kind", kind, "name", want.GetName(), "fields", drift)
	} else {
		logger.Info("updating", "kind", kind, "name", want.GetName())
	}
	copySpec(have, want)
	have.SetLabels(workload.Merged(have.GetLabels(), want.GetLabels()))
	have.SetAnnotations(workload.Merged(have.GetAnnotations(), want.GetAnnotations()))
	have.SetOwnerReferences(want.GetOwnerReferences())
	if err := w.Client.Update(ctx, have); err != nil {
		return fmt.Errorf("update %s %s: %w", kind, want.GetName(), err)
	}
	return nil
}

// getOrCreate reads the owned object into have from the cache, or creates want when there is none. An object
// that exists although the cache has none is read from the API server: the cache lags the operator's own
// create, and holds only objects with the Cluster label, so one whose label was removed by hand is restored
// rather than created again and again.
func getOrCreate[T client.Object](ctx context.Context, w Writer, want, have T) (created bool, err error) {
	kind, key := fmt.Sprintf("%T", want), client.ObjectKeyFromObject(want)
	err = w.Client.Get(ctx, key, have)
	if !apierrors.IsNotFound(err) {
		if err != nil {
			return false, fmt.Errorf("get %s %s: %w", kind, key.Name, err)
		}
		return false, nil
	}
	log.FromContext(ctx).Info("creating", "kind", kind, "name", key.Name)
	err = w.Client.Create(ctx, want)
	switch {
	case err == nil:
		return true, nil
	case !apierrors.IsAlreadyExists(err):
		return false, fmt.Errorf("create %s %s: %w", kind, key.Name, err)
	}
	if err := w.Live.Get(ctx, key, have); err != nil {
		return false, fmt.Errorf("get %s %s without the cluster label: %w", kind, key.Name, err)
	}
	return false, nil
}

// prepare sets want's controller reference to owner, its owner annotation and its desired-hash annotation,
// and returns the hash.
func prepare(w Writer, owner, want client.Object) (string, error) {
	kind := fmt.Sprintf("%T", want)
	if err := controllerutil.SetControllerReference(owner, want, w.Scheme); err != nil {
		return "", fmt.Errorf("own %s %s: %w", kind, want.GetName(), err)
	}
	want.SetAnnotations(workload.Merged(want.GetAnnotations(), OwnerAnnotations("Cluster", owner.GetName())))
	hash, err := desiredHash(want)
	if err != nil {
		return "", fmt.Errorf("hash %s %s: %w", kind, want.GetName(), err)
	}
	annotate(want, hash)
	return hash, nil
}

// Holds tells whether have, an existing object, holds everything want sets, so that Ensure would not write
// it. want gets its controller reference and desired-hash annotation, as Ensure gives them.
func Holds(w Writer, owner, want, have client.Object) (bool, error) {
	if _, err := prepare(w, owner, want); err != nil {
		return false, err
	}
	return len(workload.Drift(have, want)) == 0, nil
}

func desiredHash(obj client.Object) (string, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:12]), nil
}

func annotate(obj client.Object, hash string) {
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[desiredHashAnnotation] = hash
	obj.SetAnnotations(annotations)
}

// Delete deletes the object of kind named key when the cache holds one and it is owner's: a delete on every
// reconcile would be a write each time, and someone else's object of the name is not the operator's to delete.
// obj is an empty object of the kind.
func Delete(ctx context.Context, w Writer, owner client.Object, kind string, key client.ObjectKey, obj client.Object) error {
	err := w.Client.Get(ctx, key, obj)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("get %s %s: %w", kind, key.Name, err)
	}
	if CheckClusterOwns(owner, obj, kind) != nil {
		return nil
	}
	log.FromContext(ctx).Info("deleting", "kind", kind, "name", obj.GetName())
	if err := w.Client.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete %s %s: %w", kind, obj.GetName(), err)
	}
	return nil
}

// kindName is the kind of a typed object as users name it: Service for *v1.Service.
func kindName(obj client.Object) string {
	if k := obj.GetObjectKind().GroupVersionKind().Kind; k != "" {
		return k
	}
	t := fmt.Sprintf("%T", obj)
	return t[strings.LastIndex(t, ".")+1:]
}
