package metricsadapter

import (
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// NewProviders returns the custom and external metrics providers reading from reader, normally the
// manager's cache. podsIndexed tells that reader knows the index IndexPodsByCluster registers.
func NewProviders(reader client.Reader, podsIndexed bool) (*CustomProvider, *ExternalProvider) {
	fleet := fleetReader{reader: reader, podsIndexed: podsIndexed}
	return &CustomProvider{fleet: fleet, now: time.Now}, &ExternalProvider{fleet: fleet, now: time.Now}
}
