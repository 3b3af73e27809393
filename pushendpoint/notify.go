package pushendpoint

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// Event reasons of the push endpoint on a TargetSource.
const (
	// EventPushed: a post changed the stored snapshot.
	EventPushed = "Pushed"
	// EventPushRefused: a post was refused (unauthenticated, or the TargetSource's Secret is missing).
	EventPushRefused = "PushRefused"
)

// kubeNotifier annotates the TargetSource when its snapshot changed, which wakes the controller of whichever
// replica syncs it (the annotations show in kubectl too), and records Events on it.
//
// The wake-up is the controller's own sync request (operatorv1alpha1.SyncRequestedAnnotation), set to a value
// made from the snapshot's digest: a sync answers it by copying it to status.lastSyncRequest, and a snapshot
// that changes and changes back before a sync ran asks for nothing, as nothing changed.
type kubeNotifier struct {
	writer   client.Writer
	recorder record.EventRecorder
}

func (n *kubeNotifier) pushed(ctx context.Context, src Source, stored Stored) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		operatorv1alpha1.SyncRequestedAnnotation: SyncRequest(stored.Digest),
		PushedAtAnnotation:                       stored.PushedAt.UTC().Format(time.RFC3339),
	}}})
	if err != nil {
		return err
	}
	ts := &operatorv1alpha1.TargetSource{}
	ts.Namespace, ts.Name = src.Namespace, src.Name
	if err := n.writer.Patch(ctx, ts, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("annotate TargetSource %s: %w", src.key(), err)
	}
	return nil
}

func (n *kubeNotifier) event(src Source, warning bool, reason, message string) {
	if src.object == nil {
		return
	}
	kind := corev1.EventTypeNormal
	if warning {
		kind = corev1.EventTypeWarning
	}
	n.recorder.Event(src.object, kind, reason, message)
}

// SyncRequest is the sync request a stored snapshot of this digest makes.
func SyncRequest(digest string) string { return "push-" + digest }
