package harness

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/gnmic-operator/gnmic-operator/internal/manifests"
)

// OperatorManifests names where the operator's install comes from.
type OperatorManifests string

const (
	// ConfigDefault is `kustomize build config/default`, what `make deploy` applies.
	ConfigDefault OperatorManifests = "config/default"
	// BundleCSV is the OLM bundle: the install strategy of bundle/manifests' ClusterServiceVersion (its
	// Deployment, ServiceAccount, permissions and clusterPermissions, created the way OLM creates them for
	// an AllNamespaces OperatorGroup) and the bundle's other manifests.
	BundleCSV OperatorManifests = "bundle"
)

// operatorInstall is everything one install applies, and the operator's Deployment among it.
type operatorInstall struct {
	objects    []*unstructured.Unstructured
	deployment *appsv1.Deployment
}

func loadOperatorInstall(which OperatorManifests) (*operatorInstall, error) {
	var objects []*unstructured.Unstructured
	var err error
	switch which {
	case ConfigDefault, "":
		var built []byte
		if built, err = kustomizeBuild(filepath.Join(RepoRoot(), "config", "default")); err == nil {
			objects, err = decodeObjects(built)
		}
	case BundleCSV:
		objects, err = bundleObjects(filepath.Join(RepoRoot(), "bundle", "manifests"), OperatorNamespace)
	default:
		err = fmt.Errorf("unknown operator manifests %q (want %q or %q)", which, ConfigDefault, BundleCSV)
	}
	if err != nil {
		return nil, err
	}
	install := &operatorInstall{objects: objects}
	for _, obj := range objects {
		if obj.GetKind() != "Deployment" {
			continue
		}
		if install.deployment != nil {
			return nil, fmt.Errorf("%s holds more than one Deployment", which)
		}
		install.deployment = &appsv1.Deployment{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, install.deployment); err != nil {
			return nil, fmt.Errorf("decode Deployment %s: %w", obj.GetName(), err)
		}
	}
	if install.deployment == nil {
		return nil, fmt.Errorf("%s holds no Deployment", which)
	}
	return install, nil
}

// addArgs appends args to the operator container, as a kustomize overlay of the user's would.
func (in *operatorInstall) addArgs(args ...string) error {
	c := &in.deployment.Spec.Template.Spec.Containers[0]
	c.Args = append(c.Args, args...)
	return in.storeDeployment()
}

// setReplicas changes the Deployment's replica count.
func (in *operatorInstall) setReplicas(replicas int32) error {
	in.deployment.Spec.Replicas = &replicas
	return in.storeDeployment()
}

// storeDeployment writes the changed Deployment back into the install's objects.
func (in *operatorInstall) storeDeployment() error {
	updated, err := runtime.DefaultUnstructuredConverter.ToUnstructured(in.deployment)
	if err != nil {
		return fmt.Errorf("encode Deployment: %w", err)
	}
	unstructured.RemoveNestedField(updated, "status")
	unstructured.RemoveNestedField(updated, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(updated, "spec", "template", "metadata", "creationTimestamp")
	for _, obj := range in.objects {
		if obj.GetKind() == "Deployment" {
			obj.Object = updated
			obj.SetAPIVersion("apps/v1")
			obj.SetKind("Deployment")
		}
	}
	return nil
}

// yaml renders the install as one multi-document file.
func (in *operatorInstall) yaml() ([]byte, error) {
	var out bytes.Buffer
	for _, obj := range in.objects {
		doc, err := yaml.Marshal(obj.Object)
		if err != nil {
			return nil, fmt.Errorf("encode %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		out.WriteString("---\n")
		out.Write(doc)
	}
	return out.Bytes(), nil
}

// kustomizeBuild runs `kustomize build dir` with $KUSTOMIZE, else bin/kustomize (installed with `make
// kustomize` when missing).
func kustomizeBuild(dir string) ([]byte, error) {
	binary := os.Getenv("KUSTOMIZE")
	if binary == "" {
		binary = filepath.Join(RepoRoot(), "bin", "kustomize")
		if _, err := os.Stat(binary); err != nil {
			cmd := exec.Command("make", "--no-print-directory", "kustomize")
			cmd.Dir = RepoRoot()
			if out, err := cmd.CombinedOutput(); err != nil {
				return nil, fmt.Errorf("make kustomize: %w: %s", err, out)
			}
		}
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(binary, "build", dir)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w: %s", dir, err, stderr.String())
	}
	return stdout.Bytes(), nil
}

func decodeObjects(data []byte) ([]*unstructured.Unstructured, error) {
	objects, err := manifests.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("decode manifests: %w", err)
	}
	return objects, nil
}

// clusterScoped are the kinds of a bundle that live outside the install namespace.
var clusterScoped = map[string]bool{
	"CustomResourceDefinition": true, "ClusterRole": true, "ClusterRoleBinding": true, "PriorityClass": true,
	"ValidatingWebhookConfiguration": true, "MutatingWebhookConfiguration": true,
}

// bundleObjects is what OLM creates from a bundle in namespace: the manifests besides the CSV (in the
// namespace unless cluster-scoped), and from the CSV's install strategy the Namespace-scoped and cluster
// RBAC of each ServiceAccount, the ServiceAccounts and the Deployments, whose pods get the annotations OLM
// sets for an AllNamespaces OperatorGroup (olm.targetNamespaces empty).
func bundleObjects(dir, namespace string) ([]*unstructured.Unstructured, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no manifests in %s: %v", dir, err)
	}
	objects := []*unstructured.Unstructured{object("v1", "Namespace", "", namespace, nil)}
	var csv *unstructured.Unstructured
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		docs, err := decodeObjects(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		for _, obj := range docs {
			switch {
			case obj.GetKind() == "ClusterServiceVersion":
				csv = obj
				continue
			case !clusterScoped[obj.GetKind()]:
				obj.SetNamespace(namespace)
			}
			unstructured.RemoveNestedField(obj.Object, "status")
			unstructured.RemoveNestedField(obj.Object, "metadata", "creationTimestamp")
			objects = append(objects, obj)
		}
	}
	if csv == nil {
		return nil, fmt.Errorf("no ClusterServiceVersion in %s", dir)
	}
	strategy, found, err := unstructured.NestedMap(csv.Object, "spec", "install", "spec")
	if err != nil || !found {
		return nil, fmt.Errorf("CSV %s has no install strategy: %v", csv.GetName(), err)
	}
	serviceAccounts := map[string]bool{}
	rbac := func(field, roleKind, bindingKind string) error {
		entries, _, err := unstructured.NestedSlice(strategy, field)
		if err != nil {
			return fmt.Errorf("%s: %w", field, err)
		}
		for i, entry := range entries {
			m, _ := entry.(map[string]any)
			sa, _ := m["serviceAccountName"].(string)
			name := fmt.Sprintf("%s-%s-%d", csv.GetName(), strings.ToLower(field), i)
			roleNamespace := namespace
			if roleKind == "ClusterRole" {
				roleNamespace = ""
			}
			objects = append(objects,
				object("rbac.authorization.k8s.io/v1", roleKind, roleNamespace, name, map[string]any{"rules": m["rules"]}),
				object("rbac.authorization.k8s.io/v1", bindingKind, roleNamespace, name, map[string]any{
					"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": roleKind, "name": name},
					"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": sa, "namespace": namespace}},
				}))
			serviceAccounts[sa] = true
		}
		return nil
	}
	if err := rbac("permissions", "Role", "RoleBinding"); err != nil {
		return nil, err
	}
	if err := rbac("clusterPermissions", "ClusterRole", "ClusterRoleBinding"); err != nil {
		return nil, err
	}
	for sa := range serviceAccounts {
		objects = append(objects, object("v1", "ServiceAccount", namespace, sa, nil))
	}
	deployments, _, err := unstructured.NestedSlice(strategy, "deployments")
	if err != nil {
		return nil, fmt.Errorf("deployments: %w", err)
	}
	for _, entry := range deployments {
		m, _ := entry.(map[string]any)
		name, _ := m["name"].(string)
		spec, _ := m["spec"].(map[string]any)
		d := object("apps/v1", "Deployment", namespace, name, map[string]any{"spec": spec})
		if lbls, ok := m["label"].(map[string]any); ok {
			stringLabels := map[string]string{}
			for k, v := range lbls {
				stringLabels[k], _ = v.(string)
			}
			d.SetLabels(stringLabels)
		}
		for key, value := range map[string]string{
			"olm.operatorGroup": "global-operators", "olm.operatorNamespace": namespace, "olm.targetNamespaces": "",
		} {
			if err := unstructured.SetNestedField(d.Object, value, "spec", "template", "metadata", "annotations", key); err != nil {
				return nil, fmt.Errorf("annotate Deployment %s: %w", name, err)
			}
		}
		objects = append(objects, d)
	}
	return objects, nil
}

func object(apiVersion, kind, namespace, name string, fields map[string]any) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range fields {
		obj.Object[k] = v
	}
	obj.SetAPIVersion(apiVersion)
	obj.SetKind(kind)
	obj.SetName(name)
	if namespace != "" {
		obj.SetNamespace(namespace)
	}
	return obj
}
