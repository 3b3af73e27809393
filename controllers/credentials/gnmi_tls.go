package credentials

import (
	"context"
	"fmt"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

// GNMITLS keeps the certificates of a Cluster's gNMI server (spec.api.gnmi) while the server runs with TLS
// (the collector API's TLS is on), for the role of gNMI subscribers (clientRole): the subscriber CA in
// <cluster>-gnmi-ca, which issues subscribers' certificates and which the server alone trusts; the server's
// certificate, for its Service and every collector pod, from the collector server CA (of own, OperatorSecret's
// data) in <cluster>-gnmi-tls; and a subscriber certificate for downstream systems in
// <cluster>-gnmi-client-tls, with the collector server CA as its ca.crt. The collectors reread the server's
// files, so a renewal restarts nothing; a downstream system must reread its client files. When the server
// stops, the Secrets stay until the Cluster is deleted: the operator is granted no delete on Secrets, whose
// names are the users' too.
func (k *Keeper) GNMITLS(ctx context.Context, cluster *operatorv1alpha1.Cluster, own map[string][]byte) error {
	if !workload.GNMIServerEnabled(cluster) || !workload.APITLS(cluster) {
		return nil
	}
	return k.keepClientRole(ctx, cluster, own, clientRole{
		caName:         "gNMI subscriber CA",
		caSecret:       workload.GNMICASecretName(cluster),
		listenerSecret: workload.GNMITLSSecretName(cluster),
		clientSecret:   workload.GNMIClientTLSSecretName(cluster),
		serverName:     "gnmic gNMI server " + workload.GNMIServiceName(cluster) + "." + cluster.Namespace,
		dnsNames:       workload.GNMIServerDNSNames(cluster),
		clientName:     fmt.Sprintf("gnmi client of %s/%s", cluster.Namespace, cluster.Name),
	})
}
