package metricsadapter

import (
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// NewProviders returns the custom and external metrics providers reading from reader, normally the
// manager's cache. podsIndexed tells that reader knows the index IndexPodsByCluster registers.
//
// watched are the namespaces the reader holds (--watch-namespace); none means every namespace. A request for
// another namespace finds nothing, as in a namespace without Clusters, rather than the reader's error.
func NewProviders(reader client.Reader, podsIndexed bool, watched ...string) (*CustomProvider, *ExternalProvider) {
	fleet := fleetReader{reader: reader, podsIndexed: podsIndexed}
	if len(watched) > 0 {
		fleet.watched = map[string]bool{}
		for _, ns := range watched {
			fleet.watched[ns] = true
		}
	}
	return &CustomProvider{fleet: fleet, now: time.Now}, &ExternalProvider{fleet: fleet, now: time.Now}
}
