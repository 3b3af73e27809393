package workload

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/render"
)

// Where the bootstrap file and the REST API certificate are found in a pod.
// The API TLS Secret has the same keys as a target TLS Secret (render.CAFile,
// render.CertFile, render.KeyFile).
const (
	ConfigDir  = "/etc/gnmic"
	ConfigFile = "gnmic.yaml" // the key in the ConfigMap
	APITLSDir  = "/var/run/gnmic/api-tls"
)

// ChecksumAnnotation on the pod template carries the SHA-256 of the bootstrap
// file, so that a change to it rolls the pods (a mounted ConfigMap changes
// under a running collector, which reads its file only at start).
const ChecksumAnnotation = "operator.gnmic.dev/config-checksum"

// BootstrapConfig is the file a collector starts with (gnmic --config ...
// collect). Every key is needed: the collector runs its REST API only when
// api-server is present and then applies no defaults, so the address is
// explicit; it logs nothing without log: true; enable-metrics is spelled out
// although metrics are served regardless. Unless spec.api.insecure opts out,
// the API serves TLS and requires a client certificate signed by the CA in
// ca.crt (the operator's), so only the operator can push configuration. With
// spec.api.gnmi enabled the file also runs the gNMI server (gnmiServerSection), with spec.grpcTunnel the gRPC
// tunnel server (tunnelServerSection).
func BootstrapConfig(c *v1alpha1.Cluster) string {
	var b strings.Builder
	b.WriteString("# Written by gnmic-operator. Targets, subscriptions, outputs and inputs are pushed\n")
	b.WriteString("# to each pod through the REST API below.\n")
	b.WriteString("api-server:\n")
	fmt.Fprintf(&b, "  address: \":%d\"\n", RestPort(c))
	b.WriteString("  enable-metrics: true\n")
	if APITLS(c) {
		b.WriteString("  tls:\n")
		fmt.Fprintf(&b, "    ca-file: %s\n", path.Join(APITLSDir, render.CAFile))
		fmt.Fprintf(&b, "    cert-file: %s\n", path.Join(APITLSDir, render.CertFile))
		fmt.Fprintf(&b, "    key-file: %s\n", path.Join(APITLSDir, render.KeyFile))
		b.WriteString("    client-auth: require-verify\n")
	}
	b.WriteString(gnmiServerSection(c))
	b.WriteString(tunnelServerSection(c))
	b.WriteString("log: true\n")
	return b.String()
}

// ConfigChecksum is the hex SHA-256 of BootstrapConfig(c).
func ConfigChecksum(c *v1alpha1.Cluster) string {
	sum := sha256.Sum256([]byte(BootstrapConfig(c)))
	return hex.EncodeToString(sum[:])
}

// BootstrapConfigMap holds BootstrapConfig under the key ConfigFile. It is
// named after the Cluster.
func BootstrapConfigMap(c *v1alpha1.Cluster) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: objectMeta(c),
		Data:       map[string]string{ConfigFile: BootstrapConfig(c)},
	}
}

// objectMeta is the metadata of every object of c: named after it, in its
// namespace, with Labels.
func objectMeta(c *v1alpha1.Cluster) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: c.Name, Namespace: c.Namespace, Labels: Labels(c)}
}
