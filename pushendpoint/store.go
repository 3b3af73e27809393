package pushendpoint

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gnmic-operator/gnmic-operator/internal/inventory"
	"github.com/gnmic-operator/gnmic-operator/internal/push"
)

// What the snapshot's ConfigMap says about it, besides the records themselves.
const (
	// SnapshotKey is the binaryData key of the gzip-compressed JSON array of records.
	SnapshotKey = "records.json.gz"
	// RecordsAnnotation is the number of records of the stored snapshot.
	RecordsAnnotation = "operator.gnmic.dev/push-records"
	// DigestAnnotation is the SHA-256 of the snapshot's uncompressed JSON; the TargetSource's sync request
	// carries it too (SyncRequest), which wakes its controller.
	DigestAnnotation = "operator.gnmic.dev/push-digest"
	// PushedAtAnnotation is when the last post that changed the snapshot was stored (RFC 3339), on the
	// ConfigMap and on the TargetSource.
	PushedAtAnnotation = "operator.gnmic.dev/pushed-at"
	// SourceLabel names the TargetSource whose snapshot a ConfigMap holds.
	SourceLabel = "operator.gnmic.dev/targetsource"
	// configMapSuffix makes the ConfigMap's name from the TargetSource's.
	configMapSuffix = "-push"
)

var (
	// errTooLarge: the snapshot does not fit one ConfigMap once compressed.
	errTooLarge = errors.New("snapshot too large to store")
	// errNotOwned: a ConfigMap of the snapshot's name exists and is not the TargetSource's.
	errNotOwned = errors.New("ConfigMap is not the TargetSource's")
)

// Source is a TargetSource whose provider is push, as the endpoint needs it.
type Source struct {
	Namespace, Name string
	UID             types.UID
	// KeyField is the top-level record field that addresses a record in a delta.
	KeyField string
	// Credential authenticates its posts.
	Credential push.Credential
	// MaxBodyBytes is the largest post read for it.
	MaxBodyBytes int64
	// MaxRecords is the most records its snapshot may hold (spec.sync.maxRecords; 0: the default).
	MaxRecords int

	// object is the TargetSource, for its Events.
	object client.Object
}

func (s Source) key() types.NamespacedName {
	return types.NamespacedName{Namespace: s.Namespace, Name: s.Name}
}

// Stored describes the snapshot a post left.
type Stored struct {
	Digest  string
	Records int
	// Changed is false when the post left the records as they were (nothing was written).
	Changed  bool
	PushedAt time.Time
}

// ConfigMapName is the ConfigMap holding a TargetSource's pushed snapshot: <name>-push, shortened with a hash
// of the name when that exceeds an object name's 253 characters.
func ConfigMapName(source string) string {
	const maxName = 253
	if len(source)+len(configMapSuffix) <= maxName {
		return source + configMapSuffix
	}
	sum := sha256.Sum256([]byte(source))
	keep := maxName - len(configMapSuffix) - 9
	return source[:keep] + "-" + hex.EncodeToString(sum[:4]) + configMapSuffix
}

// conflictBackoff spaces the retries of a write that lost to another replica's: up to 10 tries over about 5
// s, jittered so that writers that collided do not collide again. Each replica handles two posts at a time,
// so a handful of writers at most contend for one ConfigMap.
var conflictBackoff = wait.Backoff{Steps: 10, Duration: 10 * time.Millisecond, Factor: 2, Jitter: 0.5, Cap: 2 * time.Second}

// snapshotStore keeps each push TargetSource's snapshot in a ConfigMap the TargetSource owns (deleted with
// it), so that whichever replica received a post, the replica that syncs the TargetSource reads it. Every
// write is a read-modify-update on the ConfigMap's resourceVersion, retried on a conflict: two posts that
// reach two replicas at once are both applied, one after the other.
type snapshotStore struct {
	reader client.Reader // the API server, never a cache: a conflict retry must read what won
	writer client.Client
	// maxDecoded bounds the uncompressed size of a stored snapshot read back.
	maxDecoded int64
	now        func() time.Time
}

// replace stores records as the source's whole snapshot.
func (s *snapshotStore) replace(ctx context.Context, src Source, records []push.Record) (Stored, error) {
	return s.update(ctx, src, false, func([]push.Record) ([]push.Record, error) { return records, nil })
}

// applyDelta applies d to the stored snapshot (to none: an empty one).
func (s *snapshotStore) applyDelta(ctx context.Context, src Source, d push.Delta) (Stored, push.DeltaResult, error) {
	var result push.DeltaResult
	stored, err := s.update(ctx, src, true, func(current []push.Record) ([]push.Record, error) {
		next, res, err := push.Apply(current, d, src.KeyField)
		result = res
		if max := cmp.Or(src.MaxRecords, inventory.DefaultMaxRecords); err == nil && len(next) > max {
			return nil, fmt.Errorf("the delta leaves %w", inventory.TooManyRecords(max))
		}
		return next, err
	})
	return stored, result, err
}

// update runs change over the current records and writes what it returns unless it is what is stored.
func (s *snapshotStore) update(ctx context.Context, src Source, readRecords bool, change func([]push.Record) ([]push.Record, error)) (Stored, error) {
	var out Stored
	err := retry.RetryOnConflict(conflictBackoff, func() error {
		cm := &corev1.ConfigMap{}
		key := types.NamespacedName{Namespace: src.Namespace, Name: ConfigMapName(src.Name)}
		err := s.reader.Get(ctx, key, cm)
		exists := err == nil
		switch {
		case apierrors.IsNotFound(err):
			cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
		case err != nil:
			return fmt.Errorf("get ConfigMap %s: %w", key, err)
		case !ownedBy(cm, src):
			return fmt.Errorf("%w: ConfigMap %s exists and is not controlled by TargetSource %s: rename or delete it",
				errNotOwned, key, src.key())
		}
		var current []push.Record
		if exists && readRecords && len(cm.BinaryData[SnapshotKey]) > 0 {
			if current, err = push.Decode(cm.BinaryData[SnapshotKey], inventory.Budget{MaxBytes: s.maxDecoded, MaxRecords: src.MaxRecords}); err != nil {
				return fmt.Errorf("ConfigMap %s: %w", key, err)
			}
		}
		next, err := change(current)
		if err != nil {
			return err
		}
		snap, err := push.Encode(next)
		if err != nil {
			return err
		}
		if len(snap.Compressed) > push.MaxCompressed {
			return fmt.Errorf("%w: %d records compress to %d bytes, more than the %d one ConfigMap holds",
				errTooLarge, snap.Records, len(snap.Compressed), push.MaxCompressed)
		}
		if exists && cm.Annotations[DigestAnnotation] == snap.Digest {
			out = Stored{Digest: snap.Digest, Records: snap.Records, PushedAt: pushedAt(cm)}
			return nil
		}
		now := s.now().UTC().Truncate(time.Second)
		s.fill(cm, src, snap, now)
		if exists {
			err = s.writer.Update(ctx, cm)
		} else {
			err = s.writer.Create(ctx, cm)
			if apierrors.IsAlreadyExists(err) {
				// Another replica created it meanwhile: read it again, as after a conflict.
				err = apierrors.NewConflict(corev1.Resource("configmaps"), key.Name, err)
			}
		}
		if err != nil {
			return err // a conflict is retried by RetryOnConflict; it needs the error unwrapped
		}
		out = Stored{Digest: snap.Digest, Records: snap.Records, Changed: true, PushedAt: now}
		return nil
	})
	if err != nil && !errors.Is(err, errTooLarge) && !errors.Is(err, errNotOwned) && !errors.Is(err, push.ErrInvalid) {
		return Stored{}, fmt.Errorf("store the snapshot of TargetSource %s: %w", src.key(), err)
	}
	return out, err
}

// fill writes the snapshot, its description and its owner into the ConfigMap.
func (s *snapshotStore) fill(cm *corev1.ConfigMap, src Source, snap push.Snapshot, now time.Time) {
	if cm.Labels == nil {
		cm.Labels = map[string]string{}
	}
	cm.Labels[SourceLabel] = src.Name
	cm.Labels["app.kubernetes.io/managed-by"] = "gnmic-operator"
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[RecordsAnnotation] = strconv.Itoa(snap.Records)
	cm.Annotations[DigestAnnotation] = snap.Digest
	cm.Annotations[PushedAtAnnotation] = now.Format(time.RFC3339)
	cm.BinaryData = map[string][]byte{SnapshotKey: snap.Compressed}
	cm.Data = nil
	if len(cm.OwnerReferences) == 0 {
		controller := true
		cm.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: ownerAPIVersion, Kind: ownerKind, Name: src.Name, UID: src.UID, Controller: &controller,
		}}
	}
}

// ownedBy is true when the TargetSource controls the ConfigMap.
func ownedBy(cm *corev1.ConfigMap, src Source) bool {
	ref := metav1.GetControllerOf(cm)
	return ref != nil && ref.Kind == ownerKind && ref.UID == src.UID
}

func pushedAt(cm *corev1.ConfigMap) time.Time {
	t, _ := time.Parse(time.RFC3339, cm.Annotations[PushedAtAnnotation])
	return t
}
