// Package testenv starts a real kube-apiserver and etcd (envtest) with the operator's CRDs installed, for
// the Ginkgo suites of controllers and APIs. The binaries come from KUBEBUILDER_ASSETS or, when it is
// unset, from hack/control-plane.sh (cached after the first build).
package testenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// RepoRoot is the repository's top directory, found from this file's location.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Assets returns the directory with kube-apiserver and etcd, building them on first use.
func Assets() (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir, nil
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(filepath.Join(RepoRoot(), "hack", "control-plane.sh"), "envtest")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("hack/control-plane.sh envtest: %w: %s", err, lastLines(stderr.String(), 5))
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	return lines[len(lines)-1], nil
}

// Options adjust the environment before it starts.
type Options struct {
	// APIServerArgs are added to (or replace) kube-apiserver flags, for example the aggregation layer's.
	APIServerArgs map[string]string
}

// Start runs etcd and kube-apiserver with every CRD of config/crd/bases installed and waits until they
// are served. Stop the returned environment with env.Stop().
func Start(opts Options) (*envtest.Environment, *rest.Config, error) {
	assets, err := Assets()
	if err != nil {
		return nil, nil, err
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(RepoRoot(), "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
	}
	if len(opts.APIServerArgs) > 0 {
		args := env.ControlPlane.GetAPIServer().Configure()
		for k, v := range opts.APIServerArgs {
			args.Set(k, v)
		}
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, nil, fmt.Errorf("start envtest with binaries from %s: %w", assets, err)
	}
	return env, cfg, nil
}

// CRDResources lists the plural resources of every CRD the operator installs.
func CRDResources() []schema.GroupVersionResource {
	gv := schema.GroupVersion{Group: "operator.gnmic.dev", Version: "v1alpha1"}
	var out []schema.GroupVersionResource
	for _, r := range []string{"clusters", "targets", "targetprofiles", "subscriptions", "outputs", "inputs", "processors", "pipelines", "balancers", "tunneltargetpolicies", "targetsources"} {
		out = append(out, gv.WithResource(r))
	}
	return out
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "; ")
}
