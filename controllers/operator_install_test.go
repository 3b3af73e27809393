package controllers_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"net/http/httputil"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gnmic-operator/gnmic-operator/test/testenv"
)

// operatorInstall is what config/default gives the operator's ServiceAccount, as kustomize renders it: the
// operator's namespace, the ServiceAccount, the RBAC bound to it and the write policies. The CRDs are the
// suite's; the Deployment and Services are not needed to run the operator in the test process.
type operatorInstall struct {
	namespace, serviceAccount string
	objects                   []*unstructured.Unstructured
}

// installKinds are the kinds of config/default the operator's permissions are made of, in the order they are
// applied (a binding after what it binds).
var installKinds = []string{"Namespace", "ServiceAccount", "ClusterRole", "Role", "ClusterRoleBinding", "RoleBinding",
	"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"}

var (
	renderOnce     sync.Once
	renderedConfig *operatorInstall
)

// renderOperatorInstall builds config/default once per suite run.
func renderOperatorInstall() *operatorInstall {
	renderOnce.Do(func() {
		built, err := kustomizeBuild(filepath.Join(testenv.RepoRoot(), "config", "default"))
		Expect(err).NotTo(HaveOccurred())
		objects, err := decodeManifests(built)
		Expect(err).NotTo(HaveOccurred())
		in := &operatorInstall{}
		for _, kind := range installKinds {
			for _, obj := range objects {
				if obj.GetKind() == kind {
					in.objects = append(in.objects, obj)
				}
			}
		}
		for _, obj := range in.objects {
			if obj.GetKind() == "ServiceAccount" {
				Expect(in.serviceAccount).To(BeEmpty(), "config/default has more than one ServiceAccount")
				in.namespace, in.serviceAccount = obj.GetNamespace(), obj.GetName()
			}
		}
		Expect(in.serviceAccount).NotTo(BeEmpty(), "config/default has no ServiceAccount")
		renderedConfig = in
	})
	return renderedConfig
}

// apply creates the objects in the suite's API server, or replaces those that exist.
func (in *operatorInstall) apply() { in.applyWith(k8sClient) }

// applyWith is apply with the client of an administrator of another API server.
func (in *operatorInstall) applyWith(admin client.Client) {
	for _, obj := range in.objects {
		want := obj.DeepCopy()
		err := admin.Create(suiteCtx, want)
		if apierrors.IsAlreadyExists(err) {
			have := &unstructured.Unstructured{}
			have.SetGroupVersionKind(obj.GroupVersionKind())
			Expect(admin.Get(suiteCtx, client.ObjectKeyFromObject(obj), have)).To(Succeed())
			want.SetResourceVersion(have.GetResourceVersion())
			err = admin.Update(suiteCtx, want)
		}
		Expect(err).NotTo(HaveOccurred(), "apply %s %s", obj.GetKind(), obj.GetName())
	}
}

// user is the ServiceAccount's user name, as kube-apiserver authenticates its tokens.
func (in *operatorInstall) user() string {
	return "system:serviceaccount:" + in.namespace + ":" + in.serviceAccount
}

// restConfig connects to the suite's API server as the operator's ServiceAccount, recording every request in
// requests when it is not nil.
func (in *operatorInstall) restConfig(requests *apiRequests) *rest.Config {
	return in.restConfigFor(cfg, requests)
}

// restConfigFor is restConfig for the API server an administrator reaches with admin.
func (in *operatorInstall) restConfigFor(admin *rest.Config, requests *apiRequests) *rest.Config {
	c := rest.CopyConfig(admin)
	c.Impersonate = rest.ImpersonationConfig{UserName: in.user()}
	if requests != nil {
		c.WrapTransport = requests.wrap
	}
	return c
}

// client is a client of the suite's API server acting as the operator's ServiceAccount.
func (in *operatorInstall) client() client.Client {
	c, err := client.New(in.restConfig(nil), client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	return c
}

// grant is one permission a rule bound to the ServiceAccount gives, where and on what.
type grant struct {
	permission
	// namespace is that of a RoleBinding, empty for a ClusterRoleBinding (every namespace); names are the
	// rule's resourceNames, empty for any name.
	namespace string
	names     []string
	// role is "<Kind> <name>" of the role holding the rule.
	role string
}

func (g grant) String() string {
	s := g.permission.String() + " (" + g.role
	if g.namespace != "" {
		s += " in " + g.namespace
	}
	if len(g.names) > 0 {
		s += ", names " + strings.Join(g.names, " ")
	}
	return s + ")"
}

// grants are the permissions of every rule bound to the operator's ServiceAccount by the bindings of the
// install, read from the API server (bindings may name built-in roles, as extension-apiserver-authentication-reader).
func (in *operatorInstall) grants() []grant {
	var out []grant
	for _, obj := range in.objects {
		if obj.GetKind() != "ClusterRoleBinding" && obj.GetKind() != "RoleBinding" {
			continue
		}
		var binding rbacv1.RoleBinding // the fields of both kinds
		Expect(fromUnstructured(obj, &binding)).To(Succeed())
		if !slices.ContainsFunc(binding.Subjects, func(s rbacv1.Subject) bool {
			return s.Kind == rbacv1.ServiceAccountKind && s.Namespace == in.namespace && s.Name == in.serviceAccount
		}) {
			continue
		}
		var rules []rbacv1.PolicyRule
		namespace := ""
		if obj.GetKind() == "RoleBinding" {
			namespace = binding.Namespace
		}
		switch binding.RoleRef.Kind {
		case "ClusterRole":
			var role rbacv1.ClusterRole
			Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Name: binding.RoleRef.Name}, &role)).To(Succeed())
			rules = role.Rules
		default:
			var role rbacv1.Role
			Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: binding.Namespace, Name: binding.RoleRef.Name}, &role)).To(Succeed())
			rules = role.Rules
		}
		for _, rule := range rules {
			for _, group := range rule.APIGroups {
				for _, resource := range rule.Resources {
					for _, verb := range rule.Verbs {
						out = append(out, grant{permission: permission{verb: verb, group: group, resource: resource},
							namespace: namespace, names: rule.ResourceNames, role: binding.RoleRef.Kind + " " + binding.RoleRef.Name})
					}
				}
			}
		}
	}
	return out
}

// kustomizeBuild runs `kustomize build dir` with bin/kustomize, installed by `make kustomize` when missing.
func kustomizeBuild(dir string) ([]byte, error) {
	binary := filepath.Join(testenv.RepoRoot(), "bin", "kustomize")
	if _, err := os.Stat(binary); err != nil {
		cmd := exec.Command("make", "--no-print-directory", "kustomize")
		cmd.Dir = testenv.RepoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("make kustomize: %w: %s", err, out)
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

func fromUnstructured(obj *unstructured.Unstructured, out any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, out)
}

func decodeManifests(data []byte) ([]*unstructured.Unstructured, error) {
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		if err := decoder.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("decode manifests: %w", err)
		}
		if len(obj.Object) > 0 {
			out = append(out, obj)
		}
	}
}

// startAPIProxy serves the suite's API server on a local plain-HTTP port as restConfig connects to it, and
// returns a kubeconfig file for that port: the metrics API server's delegated authentication takes a
// kubeconfig file, not a rest.Config, so this is how its requests reach a recording transport. Stop the
// clients before the returned stop.
func startAPIProxy(restConfig *rest.Config) (kubeconfig string, stop func()) {
	transport, err := rest.TransportFor(restConfig)
	Expect(err).NotTo(HaveOccurred())
	target, _, err := rest.DefaultServerUrlFor(restConfig)
	Expect(err).NotTo(HaveOccurred())
	proxy := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport:     transport,
		FlushInterval: -1, // watches stream
	}
	server := httptest.NewServer(proxy)

	config := clientcmdapi.NewConfig()
	config.Clusters["proxy"] = &clientcmdapi.Cluster{Server: server.URL}
	config.AuthInfos["proxy"] = &clientcmdapi.AuthInfo{}
	config.Contexts["proxy"] = &clientcmdapi.Context{Cluster: "proxy", AuthInfo: "proxy"}
	config.CurrentContext = "proxy"
	kubeconfig = filepath.Join(GinkgoT().TempDir(), "kubeconfig")
	Expect(clientcmd.WriteToFile(*config, kubeconfig)).To(Succeed())
	return kubeconfig, func() {
		server.CloseClientConnections()
		server.Close()
	}
}
