package harness

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// TargetHistory is every change of the Targets and TargetSources of a namespace, as watches saw them from the
// moment it started (the objects that existed then come first, as added): what a handover did to the Targets
// can be judged from it afterwards.
type TargetHistory struct {
	mu      sync.Mutex
	targets []TargetEvent
	sources []SourceEvent
	errs    []error
	stop    context.CancelFunc
	done    sync.WaitGroup
}

// TargetEvent is one change of a Target.
type TargetEvent struct {
	At   time.Time
	Type watch.EventType
	Name string
	UID  types.UID
	// MissingSince is the Target's operator.gnmic.dev/missing-since annotation ("" when not missing).
	MissingSince string
}

// SourceEvent is one change of a TargetSource, with the status fields a handover is judged on.
type SourceEvent struct {
	At                               time.Time
	Type                             watch.EventType
	Name                             string
	Syncs                            int64
	Created, Deleted, Missing, Owned int32
}

// RecordTargets starts recording the Targets and TargetSources of a namespace; Stop ends it.
func (cp *ControlPlane) RecordTargets(ctx context.Context, namespace string) (*TargetHistory, error) {
	c, err := client.NewWithWatch(cp.Config, client.Options{Scheme: scheme()})
	if err != nil {
		return nil, fmt.Errorf("watching client: %w", err)
	}
	ctx, stop := context.WithCancel(ctx)
	h := &TargetHistory{stop: stop}
	h.done.Add(2)
	go h.follow(ctx, c, namespace, &operatorv1alpha1.TargetList{}, func(at time.Time, t watch.EventType, o client.Object) {
		target := o.(*operatorv1alpha1.Target)
		h.targets = append(h.targets, TargetEvent{At: at, Type: t, Name: target.Name, UID: target.UID,
			MissingSince: target.Annotations[operatorv1alpha1.MissingSinceAnnotation]})
	})
	go h.follow(ctx, c, namespace, &operatorv1alpha1.TargetSourceList{}, func(at time.Time, t watch.EventType, o client.Object) {
		ts := o.(*operatorv1alpha1.TargetSource)
		h.sources = append(h.sources, SourceEvent{At: at, Type: t, Name: ts.Name, Syncs: ts.Status.Syncs,
			Created: ts.Status.TargetsCreated, Deleted: ts.Status.TargetsDeleted, Missing: ts.Status.TargetsMissing,
			Owned: ts.Status.Targets})
	})
	return h, nil
}

// follow watches one list, from the objects that exist (sent as added) on, and watches again from the last
// resource version seen when the API server ends a watch.
func (h *TargetHistory) follow(ctx context.Context, c client.WithWatch, namespace string, list client.ObjectList,
	record func(time.Time, watch.EventType, client.Object)) {
	defer h.done.Done()
	resourceVersion := ""
	for ctx.Err() == nil {
		w, err := c.Watch(ctx, list, client.InNamespace(namespace),
			&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: resourceVersion}})
		if err != nil {
			if ctx.Err() == nil {
				h.fail(fmt.Errorf("watch %T: %w", list, err))
			}
			return
		}
		for e := range w.ResultChan() {
			o, ok := e.Object.(client.Object)
			if !ok || (e.Type != watch.Added && e.Type != watch.Modified && e.Type != watch.Deleted) {
				if e.Type == watch.Error && ctx.Err() == nil {
					h.fail(fmt.Errorf("watch %T: %v", list, e.Object))
				}
				continue
			}
			resourceVersion = o.GetResourceVersion()
			h.mu.Lock()
			record(time.Now(), e.Type, o)
			h.mu.Unlock()
		}
		w.Stop()
	}
}

func (h *TargetHistory) fail(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.errs = append(h.errs, err)
}

// Stop ends the recording.
func (h *TargetHistory) Stop() {
	h.stop()
	h.done.Wait()
}

// Err is the first error of a watch: a history with one may miss changes.
func (h *TargetHistory) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.errs) == 0 {
		return nil
	}
	return h.errs[0]
}

// Targets are the Targets' changes so far, in the order they were seen.
func (h *TargetHistory) Targets() []TargetEvent {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]TargetEvent(nil), h.targets...)
}

// Sources are the TargetSources' changes so far, in the order they were seen.
func (h *TargetHistory) Sources() []SourceEvent {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]SourceEvent(nil), h.sources...)
}

// Recreated are the names that a Target was added under after another Target of that name had been seen
// (deleted and created again): a handover must make none.
func (h *TargetHistory) Recreated() []string {
	uid := map[string]types.UID{}
	var again []string
	for _, e := range h.Targets() {
		if first, seen := uid[e.Name]; seen && first != e.UID {
			again = append(again, e.Name)
		}
		if _, seen := uid[e.Name]; !seen {
			uid[e.Name] = e.UID
		}
	}
	return again
}

// Deletion is a Target's deletion: when it was seen, and the missing mark its last state carried.
type Deletion struct {
	At           time.Time
	MissingSince string
}

// Deletions are the deleted Targets, by name (the last deletion of a name, should there be several).
func (h *TargetHistory) Deletions() map[string]Deletion {
	out := map[string]Deletion{}
	for _, e := range h.Targets() {
		if e.Type == watch.Deleted {
			out[e.Name] = Deletion{At: e.At, MissingSince: e.MissingSince}
		}
	}
	return out
}

// Live are the Targets that exist at the end of the history, by name, with their UID.
func (h *TargetHistory) Live() map[string]types.UID {
	out := map[string]types.UID{}
	for _, e := range h.Targets() {
		if e.Type == watch.Deleted {
			delete(out, e.Name)
		} else {
			out[e.Name] = e.UID
		}
	}
	return out
}

// SyncsOf are the distinct values of status.syncs a TargetSource went through, in the order they were seen.
func (h *TargetHistory) SyncsOf(name string) []int64 {
	var out []int64
	for _, e := range h.Sources() {
		if e.Name == name && (len(out) == 0 || out[len(out)-1] != e.Syncs) {
			out = append(out, e.Syncs)
		}
	}
	return out
}

// OperatorReplicaOfRequest names the operator replica (its pod and process, "pod/pid") that sent a request to
// a server of the test, as fakenetbox's IdentifyClients wants it: "unknown" when no operator container holds
// the connection, the error when the socket table could not be read.
func (cp *ControlPlane) OperatorReplicaOfRequest(req *http.Request) string {
	local, ok := req.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return "no local address"
	}
	r, ok, err := cp.OperatorReplicaOfConnection(req.RemoteAddr, local.String())
	switch {
	case err != nil:
		return err.Error()
	case !ok:
		return "unknown"
	}
	return ReplicaProcess(r)
}

// ReplicaProcess names a replica's running process as OperatorReplicaOfRequest does: "pod/pid".
func ReplicaProcess(r Replica) string { return fmt.Sprintf("%s/%d", r.Pod, r.PID) }

// NetBoxTargetSource is a TargetSource that syncs the NetBox devices list at url every interval with the netbox
// preset, giving every Target the TargetProfile "routers" and deleting a device's Target after misses syncs.
func NetBoxTargetSource(namespace, name, url string, interval time.Duration, misses int32) *operatorv1alpha1.TargetSource {
	return &operatorv1alpha1.TargetSource{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: operatorv1alpha1.TargetSourceSpec{
			HTTP: &operatorv1alpha1.HTTPInventory{URL: url, Interval: &metav1.Duration{Duration: interval}},
			Mapping: operatorv1alpha1.TargetMapping{Preset: operatorv1alpha1.MappingPresetNetBox,
				Defaults: operatorv1alpha1.TargetDefaults{Profile: "routers"}},
			Sync: operatorv1alpha1.TargetSync{DeleteAfterMisses: misses},
		}}
}

// DeleteTargetSources deletes every TargetSource of a namespace, then every Target: a scenario's cleanup, so that
// nothing keeps syncing against an inventory it closed while the suite's other scenarios share the operator.
func DeleteTargetSources(ctx context.Context, c client.Client, namespace string) error {
	if err := c.DeleteAllOf(ctx, &operatorv1alpha1.TargetSource{}, client.InNamespace(namespace)); err != nil {
		return fmt.Errorf("delete the TargetSources of %s: %w", namespace, err)
	}
	if err := c.DeleteAllOf(ctx, &operatorv1alpha1.Target{}, client.InNamespace(namespace)); err != nil {
		return fmt.Errorf("delete the Targets of %s: %w", namespace, err)
	}
	return nil
}
