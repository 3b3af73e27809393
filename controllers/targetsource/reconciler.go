package targetsource

import (
	"net/http"
	"time"

	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The TargetSource's permissions: it reads TargetSources and writes their status, creates, updates and deletes
// the Targets it owns (and lists every Target of the namespace, to see conflicts), and reads the Secrets and
// ConfigMaps its providers name.
//
// +kubebuilder:rbac:groups=operator.gnmic.dev,resources=targetsources,verbs=get;list;watch
// +kubebuilder:rbac:groups=operator.gnmic.dev,resources=targetsources/status,verbs=update
// +kubebuilder:rbac:groups=operator.gnmic.dev,resources=targets,verbs=list;create;patch;delete
// +kubebuilder:rbac:groups=core,resources=secrets;configmaps,verbs=get

// Reconciler keeps each TargetSource's Targets in sync with its inventory: it fetches the inventory through a
// provider (internal/inventory), maps the records to Targets, plans the writes with the sync core, writes them
// in batches and reports.
type Reconciler struct {
	// Client writes Targets and TargetSource status, and reads TargetSources from the cache.
	client.Client
	// APIReader lists Targets and reads Secrets and ConfigMaps from the API server.
	APIReader client.Reader
	Recorder  record.EventRecorder
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	// Shard, when set, runs each TargetSource on the one replica of a sharded operator that the members'
	// rendezvous gives it to (controllers/sharding).
	Shard Assigner

	// HTTPTransport, when set, replaces the HTTP providers' transport (tests).
	HTTPTransport http.RoundTripper

	providers providers
}

// Assigner says which replica of a sharded operator runs an object.
type Assigner interface {
	// Assigned is true when this replica runs the object named key.
	Assigned(key string) bool
}

// clientReader is what refReader needs of a client.
type clientReader = client.Reader

// NewReconciler builds a Reconciler over the manager's clients.
func NewReconciler(mgr ctrl.Manager) *Reconciler {
	return &Reconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Recorder:  mgr.GetEventRecorderFor("gnmic-operator"),
	}
}
