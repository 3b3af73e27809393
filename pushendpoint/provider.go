package pushendpoint

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/inventory"
	"github.com/gnmic-operator/gnmic-operator/internal/push"
)

// maxStoredBytes bounds a stored snapshot once decompressed: the largest body the endpoint can accept
// (spec.push.maxBodyBytes's maximum), so that no ConfigMap written by hand can exhaust the operator's memory.
const maxStoredBytes = 256 << 20

// Provider is the push provider of one TargetSource: it returns the snapshot the last posts left in the
// TargetSource's ConfigMap, whichever replica received them, or Unchanged while its digest is the one it
// returned last. The TargetSource controller builds one per TargetSource (controllers/targetsource).
type Provider struct {
	reader client.Reader
	source types.NamespacedName
	uid    types.UID
	// budget bounds the stored snapshot read (spec.sync's, its bytes at most maxStoredBytes).
	budget inventory.Budget
	// lastDigest is the digest of the snapshot last returned.
	lastDigest string
}

// NewProvider reads the snapshot of ts with reader, which must be the API server (not a cache: the manager
// caches only the ConfigMaps of collector fleets).
func NewProvider(reader client.Reader, ts *operatorv1alpha1.TargetSource) *Provider {
	budget := inventory.Budget{MaxRecords: int(ts.Spec.Sync.MaxRecords), MaxBytes: min(cmp.Or(ts.Spec.Sync.MaxBytes, maxStoredBytes), maxStoredBytes)}
	return &Provider{reader: reader, source: types.NamespacedName{Namespace: ts.Namespace, Name: ts.Name}, uid: ts.UID, budget: budget}
}

var _ inventory.Provider = (*Provider)(nil)

// Fetch returns the stored snapshot, Unchanged, or inventory.ErrNoSnapshot before the first post.
func (p *Provider) Fetch(ctx context.Context) (inventory.Snapshot, error) {
	cm := &corev1.ConfigMap{}
	key := types.NamespacedName{Namespace: p.source.Namespace, Name: ConfigMapName(p.source.Name)}
	if err := p.reader.Get(ctx, key, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return inventory.Snapshot{}, inventory.ErrNoSnapshot
		}
		return inventory.Snapshot{}, fmt.Errorf("get ConfigMap %s: %w", key, err)
	}
	// A ConfigMap of that name made by someone else must not make Targets.
	if !ownedBy(cm, Source{UID: p.uid}) {
		return inventory.Snapshot{}, fmt.Errorf("ConfigMap %s is not controlled by TargetSource %s: rename or delete it", key, p.source.Name)
	}
	digest := cm.Annotations[DigestAnnotation]
	if digest != "" && digest == p.lastDigest {
		return inventory.Snapshot{Unchanged: true, Announced: -1}, nil
	}
	stored, err := push.Decode(cm.BinaryData[SnapshotKey], p.budget)
	if err != nil {
		return inventory.Snapshot{}, fmt.Errorf("ConfigMap %s: %w", key, err)
	}
	records := make([]inventory.Record, 0, len(stored))
	for i, raw := range stored {
		var r inventory.Record
		if err := json.Unmarshal(raw, &r); err != nil {
			return inventory.Snapshot{}, fmt.Errorf("ConfigMap %s: record %d: %w", key, i, err)
		}
		records = append(records, r)
	}
	p.lastDigest = digest
	return inventory.Snapshot{Records: records, Announced: -1}, nil
}
