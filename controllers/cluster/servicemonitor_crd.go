package cluster

import (
	"context"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

// DefaultCRDRecheck is how long the operator trusts what discovery said of the ServiceMonitor CRD.
const DefaultCRDRecheck = 30 * time.Second

// serviceMonitorCRD tells whether the monitoring.coreos.com/v1 ServiceMonitor kind is served, asking discovery
// at most once per recheck interval for every Cluster together. Discovery needs no permission beyond what every
// authenticated client has, and a CRD installed or removed while the operator runs is noticed within the
// interval, at the next reconcile of each Cluster (every Cluster is reconciled at least every poll interval).
// It logs once when the CRD is missing, and once again each time that changes.
type serviceMonitorCRD struct {
	discovery discovery.DiscoveryInterface
	recheck   time.Duration
	now       func() time.Time

	mu        sync.Mutex
	checkedAt time.Time
	installed bool
	known     bool
}

// Installed tells whether ServiceMonitors can be written. A discovery error other than "not found" keeps the
// last answer (false the first time) and is returned, for the caller to report.
func (c *serviceMonitorCRD) Installed(ctx context.Context) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if c.known && now.Sub(c.checkedAt) < c.recheck {
		return c.installed, nil
	}
	gv := workload.ServiceMonitorGVK.GroupVersion().String()
	resources, err := c.discovery.ServerResourcesForGroupVersion(gv)
	installed := false
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return c.installed, err
	default:
		for _, r := range resources.APIResources {
			installed = installed || r.Kind == workload.ServiceMonitorGVK.Kind
		}
	}
	if !c.known || installed != c.installed {
		if installed {
			log.FromContext(ctx).Info("the ServiceMonitor CRD is installed: prometheus outputs get ServiceMonitors", "groupVersion", gv)
		} else {
			log.FromContext(ctx).Info("the ServiceMonitor CRD is not installed: prometheus outputs get a Service, no ServiceMonitor", "groupVersion", gv)
		}
	}
	c.installed, c.known, c.checkedAt = installed, true, now
	return installed, nil
}

// forgetAnswer makes the next Installed ask discovery again: a write found the kind gone.
func (c *serviceMonitorCRD) forgetAnswer() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.known = false
}
