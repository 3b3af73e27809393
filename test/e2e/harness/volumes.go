package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// podVolumes are a pod's volumes as host directories, set up once per pod as a kubelet does: they outlive
// container restarts. Projected service-account tokens are requested through the TokenRequest API, bound to
// the pod, and requested again before they expire.
type podVolumes struct {
	client kubernetes.Interface
	pod    *corev1.Pod
	dir    string
	// paths maps a volume's name to its host directory.
	paths map[string]string
	// tokens are the token files to keep fresh.
	tokens []projectedToken
}

type projectedToken struct {
	file   string
	mode   os.FileMode
	source corev1.ServiceAccountTokenProjection
	// refresh is when the token is requested again.
	refresh time.Time
}

// kubeletTokenSeconds is the lifetime a kubelet asks for when a projection names none.
const kubeletTokenSeconds = 3600

func setUpVolumes(ctx context.Context, client kubernetes.Interface, pod *corev1.Pod, dir string) (*podVolumes, error) {
	v := &podVolumes{client: client, pod: pod, dir: dir, paths: map[string]string{}}
	for _, vol := range pod.Spec.Volumes {
		path := filepath.Join(dir, vol.Name)
		var err error
		switch {
		case vol.EmptyDir != nil:
			// A kubelet makes emptyDir world-writable: any container user may use it.
			err = makeDir(path, 0o777, 0, 0)
		case vol.Projected != nil:
			err = v.writeProjected(ctx, path, vol.Projected)
		case vol.ConfigMap != nil:
			err = v.writeProjected(ctx, path, &corev1.ProjectedVolumeSource{DefaultMode: vol.ConfigMap.DefaultMode,
				Sources: []corev1.VolumeProjection{{ConfigMap: &corev1.ConfigMapProjection{
					LocalObjectReference: vol.ConfigMap.LocalObjectReference, Items: vol.ConfigMap.Items, Optional: vol.ConfigMap.Optional}}}})
		case vol.Secret != nil:
			err = v.writeProjected(ctx, path, &corev1.ProjectedVolumeSource{DefaultMode: vol.Secret.DefaultMode,
				Sources: []corev1.VolumeProjection{{Secret: &corev1.SecretProjection{
					LocalObjectReference: corev1.LocalObjectReference{Name: vol.Secret.SecretName}, Items: vol.Secret.Items, Optional: vol.Secret.Optional}}}})
		case vol.DownwardAPI != nil:
			err = v.writeProjected(ctx, path, &corev1.ProjectedVolumeSource{DefaultMode: vol.DownwardAPI.DefaultMode,
				Sources: []corev1.VolumeProjection{{DownwardAPI: &corev1.DownwardAPIProjection{Items: vol.DownwardAPI.Items}}}})
		default:
			err = fmt.Errorf("the pod emulator supports emptyDir, projected, configMap, secret and downwardAPI volumes only")
		}
		if err != nil {
			return nil, fmt.Errorf("volume %s: %w", vol.Name, err)
		}
		v.paths[vol.Name] = path
	}
	return v, nil
}

// writeProjected writes every source of a projected volume into path, with the volume's modes.
func (v *podVolumes) writeProjected(ctx context.Context, path string, projected *corev1.ProjectedVolumeSource) error {
	if err := makeDir(path, 0o755, 0, 0); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if projected.DefaultMode != nil {
		mode = os.FileMode(*projected.DefaultMode)
	}
	for _, source := range projected.Sources {
		files := map[string][]byte{}
		modes := map[string]os.FileMode{}
		switch {
		case source.ServiceAccountToken != nil:
			token := projectedToken{file: filepath.Join(path, source.ServiceAccountToken.Path), mode: mode, source: *source.ServiceAccountToken}
			if err := v.requestToken(ctx, &token); err != nil {
				return err
			}
			v.tokens = append(v.tokens, token)
			continue
		case source.ConfigMap != nil:
			cm, err := v.client.CoreV1().ConfigMaps(v.pod.Namespace).Get(ctx, source.ConfigMap.Name, metav1.GetOptions{})
			if err != nil {
				if source.ConfigMap.Optional != nil && *source.ConfigMap.Optional {
					continue
				}
				return fmt.Errorf("configMap %s: %w", source.ConfigMap.Name, err)
			}
			data := map[string][]byte{}
			for k, s := range cm.Data {
				data[k] = []byte(s)
			}
			for k, b := range cm.BinaryData {
				data[k] = b
			}
			if err := selectItems(data, source.ConfigMap.Items, files, modes); err != nil {
				return fmt.Errorf("configMap %s: %w", cm.Name, err)
			}
		case source.Secret != nil:
			secret, err := v.client.CoreV1().Secrets(v.pod.Namespace).Get(ctx, source.Secret.Name, metav1.GetOptions{})
			if err != nil {
				if source.Secret.Optional != nil && *source.Secret.Optional {
					continue
				}
				return fmt.Errorf("secret %s: %w", source.Secret.Name, err)
			}
			if err := selectItems(secret.Data, source.Secret.Items, files, modes); err != nil {
				return fmt.Errorf("secret %s: %w", secret.Name, err)
			}
		case source.DownwardAPI != nil:
			for _, item := range source.DownwardAPI.Items {
				if item.FieldRef == nil {
					return fmt.Errorf("downwardAPI %s: only fieldRef is supported", item.Path)
				}
				value, err := podField(v.pod, item.FieldRef.FieldPath)
				if err != nil {
					return err
				}
				files[item.Path] = []byte(value)
				if item.Mode != nil {
					modes[item.Path] = os.FileMode(*item.Mode)
				}
			}
		default:
			return fmt.Errorf("unsupported projected source")
		}
		for name, content := range files {
			m := mode
			if item, ok := modes[name]; ok {
				m = item
			}
			if err := writeAtomically(filepath.Join(path, name), content, m); err != nil {
				return err
			}
		}
	}
	return nil
}

// selectItems copies the requested keys (every key without items) of data into files.
func selectItems(data map[string][]byte, items []corev1.KeyToPath, files map[string][]byte, modes map[string]os.FileMode) error {
	if len(items) == 0 {
		for k, b := range data {
			files[k] = b
		}
		return nil
	}
	for _, item := range items {
		b, ok := data[item.Key]
		if !ok {
			return fmt.Errorf("no key %s", item.Key)
		}
		files[item.Path] = b
		if item.Mode != nil {
			modes[item.Path] = os.FileMode(*item.Mode)
		}
	}
	return nil
}

// requestToken asks the TokenRequest API for a token of the pod's ServiceAccount bound to the pod, as the
// kubelet does for a serviceAccountToken projection, and writes it.
func (v *podVolumes) requestToken(ctx context.Context, t *projectedToken) error {
	seconds := int64(kubeletTokenSeconds)
	if t.source.ExpirationSeconds != nil {
		seconds = *t.source.ExpirationSeconds
	}
	var audiences []string
	if t.source.Audience != "" {
		audiences = []string{t.source.Audience}
	}
	request := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		Audiences:         audiences,
		ExpirationSeconds: &seconds,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: v.pod.Name, UID: v.pod.UID},
	}}
	sa := v.pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	issued, err := v.client.CoreV1().ServiceAccounts(v.pod.Namespace).CreateToken(ctx, sa, request, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("token of ServiceAccount %s/%s for pod %s: %w", v.pod.Namespace, sa, v.pod.Name, err)
	}
	now := time.Now()
	t.refresh = now.Add(issued.Status.ExpirationTimestamp.Sub(now) * 8 / 10)
	return writeAtomically(t.file, []byte(issued.Status.Token), t.mode)
}

// refreshTokens requests each token again once 80 % of its lifetime passed (the kubelet's rule), until ctx
// ends. A failed request is retried after 10 s.
func (v *podVolumes) refreshTokens(ctx context.Context, logf func(string, ...any)) {
	if len(v.tokens) == 0 {
		return
	}
	for {
		sort.Slice(v.tokens, func(i, j int) bool { return v.tokens[i].refresh.Before(v.tokens[j].refresh) })
		next := &v.tokens[0]
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(next.refresh)):
		}
		if err := v.requestToken(ctx, next); err != nil && ctx.Err() == nil {
			logf("refresh token of pod %s: %v", v.pod.Name, err)
			next.refresh = time.Now().Add(10 * time.Second)
		}
	}
}

// writeAtomically replaces path with content, so that a reader never sees half a file.
func writeAtomically(path string, content []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	tmp := filepath.Join(filepath.Dir(path), ".."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, content, mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp, mode); err != nil {
		return fmt.Errorf("chmod %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	return nil
}

// podField resolves a downward API field path of the pod, as the kubelet does for env and volumes.
func podField(pod *corev1.Pod, path string) (string, error) {
	if key, ok := subscript(path, "metadata.labels"); ok {
		return pod.Labels[key], nil
	}
	if key, ok := subscript(path, "metadata.annotations"); ok {
		return pod.Annotations[key], nil
	}
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "metadata.labels":
		return formatMap(pod.Labels), nil
	case "metadata.annotations":
		return formatMap(pod.Annotations), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.hostIP":
		return pod.Status.HostIP, nil
	case "status.podIP":
		return pod.Status.PodIP, nil
	case "status.hostIPs", "status.podIPs":
		var ips []string
		if path == "status.hostIPs" {
			for _, ip := range pod.Status.HostIPs {
				ips = append(ips, ip.IP)
			}
		} else {
			for _, ip := range pod.Status.PodIPs {
				ips = append(ips, ip.IP)
			}
		}
		return strings.Join(ips, ","), nil
	}
	return "", fmt.Errorf("unsupported field path %q", path)
}

// subscript parses "prefix['key']".
func subscript(path, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(path, prefix+"['")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, "']")
}

// formatMap renders labels or annotations as the downward API does: key="value" lines, sorted.
func formatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	lines := make([]string, 0, len(keys))
	for _, k := range keys {
		lines = append(lines, fmt.Sprintf("%s=%q", k, m[k]))
	}
	return strings.Join(lines, "\n")
}
