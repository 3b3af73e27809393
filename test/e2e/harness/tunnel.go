package harness

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/gnmic-operator/gnmic-operator/internal/workload"
	"github.com/gnmic-operator/gnmic-operator/test/fakecollector"
)

// Dial-in devices (spec.grpcTunnel): a collector pod with a grpc-tunnel container port runs the tunnel server
// of its fake collector on its IP and that port, as gNMIc does from its bootstrap file's tunnel-server section:
// with the certificate of the Secret volume mounted at workload.TunnelTLSDir and the client-auth the section
// names. Devices in a test reach it at TunnelAddr, the way a LoadBalancer would hand a tunnel to one pod.

// serveTunnel starts the collector's tunnel server when the pod asks for one; it returns the address, or "".
func (c *Collectors) serveTunnel(pod *corev1.Pod, collector *fakecollector.Collector) (string, error) {
	port := podPortNamed(pod, workload.TunnelPortName)
	if port == 0 {
		return "", nil
	}
	serverTLS, err := c.tunnelTLS(pod)
	if err != nil {
		return "", err
	}
	return collector.ServeTunnel(net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(int(port))), serverTLS)
}

// tunnelTLS is the TLS of the pod's tunnel server: nil when it mounts no tunnel certificate (a Cluster without
// TLS on its collector API).
func (c *Collectors) tunnelTLS(pod *corev1.Pod) (*tls.Config, error) {
	secret := mountedSecret(pod, workload.TunnelTLSDir)
	if secret == "" {
		return nil, nil
	}
	s, err := c.clientset.CoreV1().Secrets(pod.Namespace).Get(c.ctx, secret, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("read Secret %s: %w", secret, err)
	}
	cert, err := tls.X509KeyPair(s.Data["tls.crt"], s.Data["tls.key"])
	if err != nil {
		return nil, fmt.Errorf("tunnel server certificate of Secret %s: %w", secret, err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	auth, err := c.tunnelClientAuth(pod)
	if err != nil {
		return nil, err
	}
	if auth != "" {
		cfg.ClientCAs = x509.NewCertPool()
		cfg.ClientCAs.AppendCertsFromPEM(s.Data["ca.crt"])
	}
	switch auth {
	case "require-verify":
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	case "verify-if-given":
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	}
	return cfg, nil
}

// tunnelClientAuth is tunnel-server.tls.client-auth of the pod's bootstrap file.
func (c *Collectors) tunnelClientAuth(pod *corev1.Pod) (string, error) {
	var configMap string
	for _, v := range pod.Spec.Volumes {
		if v.ConfigMap != nil {
			configMap = v.ConfigMap.Name
		}
	}
	cm, err := c.clientset.CoreV1().ConfigMaps(pod.Namespace).Get(c.ctx, configMap, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("read the bootstrap ConfigMap %s: %w", configMap, err)
	}
	var bootstrap struct {
		TunnelServer struct {
			TLS struct {
				ClientAuth string `json:"client-auth"`
			} `json:"tls"`
		} `json:"tunnel-server"`
	}
	if err := yaml.Unmarshal([]byte(cm.Data[workload.ConfigFile]), &bootstrap); err != nil {
		return "", fmt.Errorf("bootstrap file of ConfigMap %s: %w", configMap, err)
	}
	return bootstrap.TunnelServer.TLS.ClientAuth, nil
}

// mountedSecret is the Secret of the volume the pod mounts at dir, "" when none.
func mountedSecret(pod *corev1.Pod, dir string) string {
	var volume string
	for _, ctr := range pod.Spec.Containers {
		for _, m := range ctr.VolumeMounts {
			if m.MountPath == dir {
				volume = m.Name
			}
		}
	}
	for _, v := range pod.Spec.Volumes {
		if v.Name == volume && volume != "" && v.Secret != nil {
			return v.Secret.SecretName
		}
	}
	return ""
}

func podPortNamed(pod *corev1.Pod, name string) int32 {
	for _, container := range pod.Spec.Containers {
		for _, p := range container.Ports {
			if p.Name == name {
				return p.ContainerPort
			}
		}
	}
	return 0
}

// TunnelAddr is the address of the tunnel server of the pod's collector, if it runs one.
func (c *Collectors) TunnelAddr(namespace, pod string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, running := range c.byUID {
		if running.pod.Namespace == namespace && running.pod.Name == pod && running.tunnelAddr != "" {
			return running.tunnelAddr, true
		}
	}
	return "", false
}
