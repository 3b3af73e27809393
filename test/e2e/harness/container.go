package harness

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// containerHost is what a kubelet knows beyond the pod: how containers reach kube-apiserver.
type containerHost struct {
	client kubernetes.Interface
	// apiHost and apiPort are the endpoint of the default/kubernetes Service (see kubernetesServiceEnv).
	apiHost, apiPort string
}

// sandboxFor is the sandbox a container of pod runs in: the image's files, the pod's volumes at their
// mount paths, the kubelet's /etc/hosts, /etc/hostname, /etc/resolv.conf and termination log, the
// environment and command line a kubelet would compute, and the security context's user, read-only root
// and no_new_privs. dir is the container's host directory.
func (h containerHost) sandboxFor(ctx context.Context, pod *corev1.Pod, c *corev1.Container, img Image, vols *podVolumes, dir string) (sandboxSpec, error) {
	s := sandboxSpec{Rootfs: filepath.Join(dir, "rootfs"), Hostname: podHostname(pod), Dirs: img.Dirs, Files: img.Content}
	if err := os.MkdirAll(s.Rootfs, 0o755); err != nil {
		return s, fmt.Errorf("create %s: %w", s.Rootfs, err)
	}

	env, err := h.environment(ctx, pod, c)
	if err != nil {
		return s, err
	}
	lookup := func(name string) (string, bool) {
		for i := len(env) - 1; i >= 0; i-- {
			if k, v, _ := strings.Cut(env[i], "="); k == name {
				return v, true
			}
		}
		return "", false
	}
	command, args := c.Command, c.Args
	if len(command) == 0 {
		command = img.Entrypoint
	}
	argv := make([]string, 0, len(command)+len(args))
	for _, a := range append(append([]string(nil), command...), args...) {
		argv = append(argv, expandReferences(a, lookup))
	}
	s.Argv = append(argv[:1:1], img.pinListenAddresses(argv[1:], pod.Status.PodIP)...)

	s.UID, s.GID = img.UID, img.GID
	var readOnlyRoot, noNewPrivileges, nonRoot bool
	if psc := pod.Spec.SecurityContext; psc != nil {
		if psc.RunAsUser != nil {
			s.UID = int(*psc.RunAsUser)
		}
		if psc.RunAsGroup != nil {
			s.GID = int(*psc.RunAsGroup)
		}
		nonRoot = psc.RunAsNonRoot != nil && *psc.RunAsNonRoot
	}
	if csc := c.SecurityContext; csc != nil {
		if csc.RunAsUser != nil {
			s.UID = int(*csc.RunAsUser)
		}
		if csc.RunAsGroup != nil {
			s.GID = int(*csc.RunAsGroup)
		}
		if csc.RunAsNonRoot != nil {
			nonRoot = *csc.RunAsNonRoot
		}
		readOnlyRoot = csc.ReadOnlyRootFilesystem != nil && *csc.ReadOnlyRootFilesystem
		noNewPrivileges = csc.AllowPrivilegeEscalation != nil && !*csc.AllowPrivilegeEscalation
	}
	if nonRoot && s.UID == 0 {
		return s, fmt.Errorf("container %s has runAsNonRoot and image will run as root", c.Name)
	}
	s.ReadOnlyRoot, s.NoNewPrivileges = readOnlyRoot, noNewPrivileges
	s.WorkingDir = c.WorkingDir
	if s.WorkingDir == "" {
		s.WorkingDir = img.WorkingDir
	}
	if s.WorkingDir == "" {
		s.WorkingDir = "/"
	}
	// The runtime's additions: the image's environment under the container's, HOSTNAME, and HOME from
	// the user's passwd entry unless set.
	s.Env = append(append(append([]string(nil), img.Env...), "HOSTNAME="+s.Hostname), env...)
	if _, ok := lookup("HOME"); !ok {
		s.Env = append(s.Env, "HOME="+img.home(s.UID))
	}

	for target, source := range img.Files {
		s.Mounts = append(s.Mounts, sandboxMount{Source: source, Target: target, ReadOnly: true})
	}
	managed, err := kubeletFiles(pod, c, dir)
	if err != nil {
		return s, err
	}
	s.Mounts = append(s.Mounts, managed...)
	for _, m := range c.VolumeMounts {
		source, ok := vols.paths[m.Name]
		if !ok {
			return s, fmt.Errorf("volume mount %s: no volume of that name", m.Name)
		}
		if m.SubPath != "" {
			source = filepath.Join(source, m.SubPath)
			if err := os.MkdirAll(source, 0o777); err != nil {
				return s, fmt.Errorf("subPath %s: %w", m.SubPath, err)
			}
		}
		s.Mounts = append(s.Mounts, sandboxMount{Source: source, Target: m.MountPath, ReadOnly: m.ReadOnly})
	}
	return s, nil
}

// environment is the container's environment as a kubelet computes it: the default/kubernetes Service's
// variables, then envFrom and env in order, each value's $(VAR) references expanded with what is defined
// before it, field references resolved from the pod (the downward API).
func (h containerHost) environment(ctx context.Context, pod *corev1.Pod, c *corev1.Container) ([]string, error) {
	env := h.kubernetesServiceEnv()
	lookup := func(name string) (string, bool) {
		for i := len(env) - 1; i >= 0; i-- {
			if k, v, _ := strings.Cut(env[i], "="); k == name {
				return v, true
			}
		}
		return "", false
	}
	for _, from := range c.EnvFrom {
		data := map[string]string{}
		switch {
		case from.ConfigMapRef != nil:
			cm, err := h.client.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, from.ConfigMapRef.Name, metav1.GetOptions{})
			if err != nil {
				if from.ConfigMapRef.Optional != nil && *from.ConfigMapRef.Optional {
					continue
				}
				return nil, fmt.Errorf("envFrom configMap %s: %w", from.ConfigMapRef.Name, err)
			}
			data = cm.Data
		case from.SecretRef != nil:
			secret, err := h.client.CoreV1().Secrets(pod.Namespace).Get(ctx, from.SecretRef.Name, metav1.GetOptions{})
			if err != nil {
				if from.SecretRef.Optional != nil && *from.SecretRef.Optional {
					continue
				}
				return nil, fmt.Errorf("envFrom secret %s: %w", from.SecretRef.Name, err)
			}
			for k, v := range secret.Data {
				data[k] = string(v)
			}
		}
		for k, v := range data {
			env = append(env, from.Prefix+k+"="+v)
		}
	}
	for _, e := range c.Env {
		value := expandReferences(e.Value, lookup)
		if from := e.ValueFrom; from != nil {
			var err error
			switch {
			case from.FieldRef != nil:
				value, err = podField(pod, from.FieldRef.FieldPath)
			case from.ConfigMapKeyRef != nil:
				var cm *corev1.ConfigMap
				if cm, err = h.client.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, from.ConfigMapKeyRef.Name, metav1.GetOptions{}); err == nil {
					value = cm.Data[from.ConfigMapKeyRef.Key]
				}
			case from.SecretKeyRef != nil:
				var secret *corev1.Secret
				if secret, err = h.client.CoreV1().Secrets(pod.Namespace).Get(ctx, from.SecretKeyRef.Name, metav1.GetOptions{}); err == nil {
					value = string(secret.Data[from.SecretKeyRef.Key])
				}
			default:
				err = fmt.Errorf("only fieldRef, configMapKeyRef and secretKeyRef are supported")
			}
			if err != nil {
				return nil, fmt.Errorf("env %s: %w", e.Name, err)
			}
		}
		env = append(env, e.Name+"="+value)
	}
	return env, nil
}

// kubernetesServiceEnv are the variables through which a pod finds kube-apiserver (rest.InClusterConfig
// reads the first two). A kubelet gives the ClusterIP of the default/kubernetes Service; nothing routes
// ClusterIPs here (no kube-proxy), so they name the Service's endpoint, kube-apiserver's own address.
func (h containerHost) kubernetesServiceEnv() []string {
	address := net.JoinHostPort(h.apiHost, h.apiPort)
	return []string{
		"KUBERNETES_SERVICE_HOST=" + h.apiHost,
		"KUBERNETES_SERVICE_PORT=" + h.apiPort,
		"KUBERNETES_SERVICE_PORT_HTTPS=" + h.apiPort,
		"KUBERNETES_PORT=tcp://" + address,
	}
}

// kubeletFiles are the files a kubelet mounts into every container: /etc/hosts, /etc/hostname and
// /etc/resolv.conf (root-owned, so read-only for a non-root user; mounted read-only here), and the
// writable termination message file.
func kubeletFiles(pod *corev1.Pod, c *corev1.Container, dir string) ([]sandboxMount, error) {
	hostname := podHostname(pod)
	resolv, err := os.ReadFile("/etc/resolv.conf")
	if err != nil {
		resolv = nil // no host resolver configuration: an empty one, as with dnsPolicy None
	}
	files := map[string][]byte{
		"/etc/hosts": []byte("# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n" +
			pod.Status.PodIP + "\t" + hostname + "\n"),
		"/etc/hostname":    []byte(hostname + "\n"),
		"/etc/resolv.conf": resolv,
	}
	var mounts []sandboxMount
	for target, content := range files {
		source := filepath.Join(dir, strings.ReplaceAll(strings.TrimPrefix(target, "/"), "/", "-"))
		if err := os.WriteFile(source, content, 0o644); err != nil {
			return nil, fmt.Errorf("write %s: %w", source, err)
		}
		mounts = append(mounts, sandboxMount{Source: source, Target: target, ReadOnly: true})
	}
	if c.TerminationMessagePath != "" {
		source := filepath.Join(dir, "termination-log")
		if err := os.WriteFile(source, nil, 0o666); err != nil {
			return nil, fmt.Errorf("write %s: %w", source, err)
		}
		if err := os.Chmod(source, 0o666); err != nil {
			return nil, fmt.Errorf("chmod %s: %w", source, err)
		}
		mounts = append(mounts, sandboxMount{Source: source, Target: c.TerminationMessagePath})
	}
	return mounts, nil
}

func podHostname(pod *corev1.Pod) string {
	name := pod.Name
	if pod.Spec.Hostname != "" {
		name = pod.Spec.Hostname
	}
	if len(name) > 63 {
		name = name[:63]
	}
	return name
}

// expandReferences replaces $(NAME) by NAME's value when lookup knows it and $$ by $, leaving unknown
// references as they are: Kubernetes' expansion of command, args and env values.
func expandReferences(s string, lookup func(string) (string, bool)) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '$' && i+1 < len(s) {
			switch s[i+1] {
			case '$':
				b.WriteByte('$')
				i++
				continue
			case '(':
				if end := strings.IndexByte(s[i+2:], ')'); end >= 0 {
					name := s[i+2 : i+2+end]
					if v, ok := lookup(name); ok {
						b.WriteString(v)
					} else {
						b.WriteString(s[i : i+3+end])
					}
					i += 2 + end
					continue
				}
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
