package targetsource

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/targetsync"
)

// written counts the writes a sync made.
type written struct {
	created, updated, marked, deleted int
}

// write is one API write of a plan.
type write struct {
	verb string // create, update, mark, delete
	name string
	do   func(ctx context.Context) error
}

// errRaced is a write another writer made unnecessary: a create of a Target that appeared since the list
// (another replica of the operator syncing the same TargetSource for a moment, or a user). It is not a
// failure, nor counted as written; the next sync sees what the Target is.
var errRaced = errors.New("raced")

// writers bounds the writes of a batch in flight at once.
const writers = 16

// apply writes the plan in batches of spec.sync.batchSize: creates, updates, marks, then deletes. Each write
// is conditional on the Target as listed (its resourceVersion; a create on its absence), so a replica that
// raced this one makes it fail rather than overwrite (a create that found the Target there is left to the next
// sync, which sees whose it is). A batch with a failed write is the last: the sync
// reports what failed, and the next sync plans again from what is.
func (r *Reconciler) apply(ctx context.Context, ts *operatorv1alpha1.TargetSource, nt namespaceTargets, p targetsync.Plan, sync int64) (written, error) {
	var writes []write
	for _, d := range p.Create {
		writes = append(writes, write{"create", d.Name, func(ctx context.Context) error {
			err := r.Create(ctx, newTarget(ts, d))
			if apierrors.IsAlreadyExists(err) {
				return errRaced
			}
			return err
		}})
	}
	for _, d := range p.Update {
		t := nt.byName[d.Name].DeepCopy()
		render(t, ts, d)
		takeOver(t, ts)
		writes = append(writes, write{"update", d.Name, func(ctx context.Context) error { return r.Update(ctx, t) }})
	}
	for _, name := range p.Mark {
		t := nt.byName[name].DeepCopy()
		if t.Annotations == nil {
			t.Annotations = map[string]string{}
		}
		t.Annotations[operatorv1alpha1.MissingSinceAnnotation] = strconv.FormatInt(sync, 10)
		takeOver(t, ts)
		writes = append(writes, write{"mark", name, func(ctx context.Context) error { return r.Update(ctx, t) }})
	}
	for _, name := range p.Delete {
		t := nt.byName[name]
		writes = append(writes, write{"delete", name, func(ctx context.Context) error {
			return client.IgnoreNotFound(r.Delete(ctx, t.DeepCopy(), client.Preconditions{UID: &t.UID, ResourceVersion: &t.ResourceVersion}))
		}})
	}

	size := batchSize(&ts.Spec.Sync)
	var w written
	for start := 0; start < len(writes); start += size {
		done, err := writeBatch(ctx, writes[start:min(start+size, len(writes))])
		w.add(done)
		if err != nil {
			return w, err
		}
	}
	return w, nil
}

// writeBatch sends a batch's writes, writers at a time, and waits for all of them.
func writeBatch(ctx context.Context, batch []write) (written, error) {
	var (
		mu   sync.Mutex
		w    written
		errs []error
		wg   sync.WaitGroup
	)
	slots := make(chan struct{}, writers)
	for _, wr := range batch {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			err := wr.do(ctx)
			mu.Lock()
			defer mu.Unlock()
			if errors.Is(err, errRaced) {
				return
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s Target %s: %w", wr.verb, wr.name, err))
				return
			}
			w.count(wr.verb)
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return w, fmt.Errorf("%d of %d writes failed, the first: %w", len(errs), len(batch), errs[0])
	}
	return w, nil
}

func (w *written) count(verb string) {
	switch verb {
	case "create":
		w.created++
	case "update":
		w.updated++
	case "mark":
		w.marked++
	case "delete":
		w.deleted++
	}
}

func (w *written) add(o written) {
	w.created += o.created
	w.updated += o.updated
	w.marked += o.marked
	w.deleted += o.deleted
}
