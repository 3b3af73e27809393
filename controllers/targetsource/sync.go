package targetsource

import (
	"context"
	"errors"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/inventory"
	"github.com/gnmic-operator/gnmic-operator/internal/targetmapping"
	"github.com/gnmic-operator/gnmic-operator/internal/targetsync"
)

// outcome is what one sync did; status and events are computed from it.
type outcome struct {
	// err is why the sync changed nothing (or stopped part way through its writes); stage says where.
	err   error
	stage stage
	// noSnapshot: the provider has nothing yet (a push inventory before its first post).
	noSnapshot bool

	// records of the answer, before expand and include; announced as the inventory said (-1: it did not).
	records   int
	announced int
	mapped    targetmapping.Result
	plan      targetsync.Plan
	written   written
	// sync is the number of this sync (status.syncs + 1).
	sync int64
}

// stage is where a sync stopped.
type stage int

const (
	stageDone      stage = iota
	stageFetch           // the provider could not be built or the inventory read
	stageBudget          // the answer, or mapping it, went over a budget
	stageMapping         // the mapping does not compile
	stageTruncated       // the answer looks truncated
	stageList            // the Targets could not be listed
	stageApply           // writes failed part way
)

// sync runs one sync of the TargetSource. Nothing is written unless the answer was fetched, mapped and found
// complete.
func (r *Reconciler) sync(ctx context.Context, ts *operatorv1alpha1.TargetSource) outcome {
	o := outcome{sync: ts.Status.Syncs + 1, announced: -1}
	key := types.NamespacedName{Namespace: ts.Namespace, Name: ts.Name}

	mapper, err := r.mappings.of(ts)
	if err != nil {
		o.err, o.stage = err, stageMapping
		return o
	}
	entry, err := r.providerFor(ctx, ts)
	if err != nil {
		o.err, o.stage = err, stageFetch
		return o
	}
	snap, err := entry.provider.Fetch(ctx)
	switch {
	case errors.Is(err, inventory.ErrNoSnapshot):
		o.noSnapshot, o.err, o.stage = true, err, stageFetch
		return o
	case err != nil:
		// The provider may hold a half-read answer's state: the next sync starts afresh.
		r.providers.forget(key)
		o.err, o.stage = err, stageFetch
		if inventory.IsBudgetExceeded(err) {
			o.stage = stageBudget
		}
		return o
	case snap.Unchanged:
		if entry.last == nil {
			r.providers.forget(key)
			o.err, o.stage = errUnchangedWithoutSnapshot, stageFetch
			return o
		}
		snap = *entry.last
	default:
		entry.last = &snap
	}
	o.records, o.announced = len(snap.Records), snap.Announced
	if o.mapped, err = mapper.Map(ctx, snap.Records, mappingTimeout(&ts.Spec.Sync)); err != nil {
		o.err, o.stage = err, stageFetch
		if inventory.IsBudgetExceeded(err) {
			o.stage = stageBudget
		}
		return o
	}

	guard := targetsync.Guard{Records: o.records, Announced: snap.Announced, LastRecords: int(ts.Status.Records),
		MinPercent: minRecordsPercent(&ts.Spec.Sync)}
	if truncated, why := guard.Truncated(); truncated {
		// Judged before the Targets are listed: a truncated answer costs no list either.
		o.err, o.stage = errors.New(why), stageTruncated
		return o
	}
	nt, err := r.listTargets(ctx, ts)
	if err != nil {
		o.err, o.stage = err, stageList
		return o
	}
	in := targetsync.Input{
		Existing:          nt.existing,
		Sync:              o.sync,
		DeleteAfterMisses: int64(deleteAfterMisses(&ts.Spec.Sync)),
		Guard:             guard,
	}
	for _, t := range o.mapped.Targets {
		in.Desired = append(in.Desired, targetsync.Desired(t))
	}
	o.plan = targetsync.PlanSync(in)
	if o.plan.Truncated != "" {
		o.err, o.stage = errors.New(o.plan.Truncated), stageTruncated
		return o
	}
	o.written, err = r.apply(ctx, ts, nt, o.plan, o.sync)
	if err != nil {
		o.err, o.stage = err, stageApply
	}
	return o
}

// providerFor is the TargetSource's provider: the one kept since the last sync while its fingerprint holds,
// else a new one.
func (r *Reconciler) providerFor(ctx context.Context, ts *operatorv1alpha1.TargetSource) (*providerEntry, error) {
	key := types.NamespacedName{Namespace: ts.Namespace, Name: ts.Name}
	build, fingerprint, err := r.newProvider(ctx, ts)
	if err != nil {
		return nil, err
	}
	if e := r.providers.get(key); e != nil && e.fingerprint == fingerprint {
		return e, nil
	}
	p, err := build()
	if err != nil {
		return nil, err
	}
	e := &providerEntry{fingerprint: fingerprint, provider: p}
	r.providers.set(key, e)
	return e, nil
}

// The defaults of spec.sync, which the CRD's schema sets; an object written before it had them (or with the
// schema's defaulting bypassed) gets the same here, never a more eager deletion.
const (
	defaultDeleteAfterMisses = 3
	defaultBatchSize         = 200
)

// deleteAfterMisses is spec.sync.deleteAfterMisses, 3 unless set.
func deleteAfterMisses(s *operatorv1alpha1.TargetSync) int32 {
	if s.DeleteAfterMisses <= 0 {
		return defaultDeleteAfterMisses
	}
	return s.DeleteAfterMisses
}

// batchSize is spec.sync.batchSize, 200 unless set.
func batchSize(s *operatorv1alpha1.TargetSync) int {
	if s.BatchSize <= 0 {
		return defaultBatchSize
	}
	return int(s.BatchSize)
}

// minRecordsPercent is the truncation guard's percentage: 50 unless set (0 turns it off).
func minRecordsPercent(s *operatorv1alpha1.TargetSync) int {
	if s.MinRecordsPercent == nil {
		return 50
	}
	return int(*s.MinRecordsPercent)
}

// errUnchangedWithoutSnapshot is a provider answering Unchanged with nothing it could stand for.
var errUnchangedWithoutSnapshot = errors.New("the provider answered unchanged before any snapshot")

// compileMessage is a mapping error as a condition shows it: one line per expression.
func compileMessage(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", "; ")
}
