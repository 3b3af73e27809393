package credentials

import (
	"context"
	"fmt"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/workload"
)

// TunnelTLS keeps the certificates of a Cluster's gRPC tunnel server (spec.grpcTunnel) while it runs with TLS
// (the collector API's TLS is on), for the role of dial-in devices (clientRole), as GNMITLS does for the gNMI
// server: the device CA in <cluster>-tunnel-ca, which issues devices' certificates and which the tunnel server
// alone trusts; the server's certificate, for its Service and every collector pod, from the collector server
// CA in <cluster>-tunnel-tls; and a device certificate in <cluster>-tunnel-client-tls, with the collector server
// CA as its ca.crt. The Secrets stay when the tunnel stops and go with the Cluster.
func (k *Keeper) TunnelTLS(ctx context.Context, cluster *operatorv1alpha1.Cluster, own map[string][]byte) error {
	if !workload.TunnelEnabled(cluster) || !workload.APITLS(cluster) {
		return nil
	}
	return k.keepClientRole(ctx, cluster, own, clientRole{
		caName:         "dial-in device CA",
		caSecret:       workload.TunnelCASecretName(cluster),
		listenerSecret: workload.TunnelTLSSecretName(cluster),
		clientSecret:   workload.TunnelClientTLSSecretName(cluster),
		serverName:     "gnmic tunnel server " + workload.TunnelServiceName(cluster) + "." + cluster.Namespace,
		dnsNames:       workload.TunnelServerDNSNames(cluster),
		clientName:     fmt.Sprintf("dial-in device of %s/%s", cluster.Namespace, cluster.Name),
	})
}
