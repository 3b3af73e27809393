package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Operator Lifecycle Manager v0 on the local control plane: its olm-operator and catalog-operator run as
// local processes with the admin kubeconfig, as their Deployments would run them with their ServiceAccount
// (cluster-admin), from the binaries hack/olm.sh builds. A catalog is a file-based catalog (FBC) that opm
// renders from bundle directories, each bundle's manifests inline as olm.bundle.object properties and its
// image empty, served by `opm serve` on loopback and named by a grpc CatalogSource's spec.address. OLM's
// resolver then takes every manifest from the catalog (an empty bundle path means "embedded"): no bundle
// image is pulled and no unpack Job runs, which kwok could not run anyway.

const (
	// OLMNamespace is where OLM runs and looks for global catalogs (its --namespace), as `operator-sdk olm
	// install` deploys it.
	OLMNamespace = "olm"
	// OperatorsNamespace holds the global OperatorGroup: operators installed there watch every namespace.
	OperatorsNamespace = "operators"
	// GlobalOperatorGroup is the AllNamespaces OperatorGroup of OperatorsNamespace.
	GlobalOperatorGroup = "global-operators"
)

// OLMOptions configure StartOLM.
type OLMOptions struct {
	// BinDir holds olm, catalog, opm and olm-crds/ (hack/olm.sh). Empty: $E2E_OLM_BIN_DIR, else the
	// repository's bin/.
	BinDir string
}

// OLM is Operator Lifecycle Manager running against a ControlPlane.
type OLM struct {
	cp     *ControlPlane
	BinDir string
	client client.Client

	mu       sync.Mutex
	catalogs []*Catalog
}

// OLMScheme knows the core kinds, OLM's and the operator's.
func OLMScheme() *runtime.Scheme {
	s := scheme()
	utilruntime.Must(operatorsv1alpha1.AddToScheme(s))
	utilruntime.Must(operatorsv1.AddToScheme(s))
	return s
}

// StartOLM installs OLM's CRDs, the namespaces olm and operators, the cluster OLMConfig and the
// OperatorGroups of the upstream install (global-operators in operators, olm-operators in olm), and runs
// olm-operator and catalog-operator until the control plane stops. It returns once olm-operator has
// processed the global OperatorGroup.
func (cp *ControlPlane) StartOLM(ctx context.Context, opts OLMOptions) (*OLM, error) {
	bin := opts.BinDir
	if bin == "" {
		bin = os.Getenv("E2E_OLM_BIN_DIR")
	}
	if bin == "" {
		bin = filepath.Join(RepoRoot(), "bin")
	}
	for _, name := range []string{"olm", "catalog", "opm", "olm-crds"} {
		if _, err := os.Stat(filepath.Join(bin, name)); err != nil {
			return nil, fmt.Errorf("OLM: %w (build it with make olm, hack/olm.sh)", err)
		}
	}
	c, err := client.New(cp.Config, client.Options{Scheme: OLMScheme()})
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	o := &OLM{cp: cp, BinDir: bin, client: c}

	crds := filepath.Join(bin, "olm-crds")
	if out, err := cp.Kubectl(ctx, "apply", "--server-side", "-f", crds); err != nil {
		return nil, fmt.Errorf("kubectl apply %s: %w: %s", crds, err, out)
	}
	if out, err := cp.Kubectl(ctx, "wait", "--for=condition=Established", "--timeout=60s", "-f", crds); err != nil {
		return nil, fmt.Errorf("wait for OLM's CRDs: %w: %s", err, out)
	}
	objects := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: OLMNamespace}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: OperatorsNamespace}},
		&operatorsv1.OLMConfig{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}},
		&operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: OperatorsNamespace, Name: GlobalOperatorGroup}},
		&operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: OLMNamespace, Name: "olm-operators"},
			Spec: operatorsv1.OperatorGroupSpec{TargetNamespaces: []string{OLMNamespace}}},
	}
	for _, obj := range objects {
		if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("create %T %s: %w", obj, obj.GetName(), err)
		}
	}

	// Both serve health and metrics on :8080 (no flag changes it): the second to start cannot bind it and
	// logs so; neither needs it here.
	kubeconfig := "KUBECONFIG=" + cp.Kubeconfig
	if err := o.start("olm-operator", "olm", []string{"--namespace=" + OLMNamespace, "--writeStatusName="},
		kubeconfig, "OPERATOR_NAMESPACE="+OLMNamespace, "OPERATOR_NAME=olm-operator"); err != nil {
		return nil, err
	}
	// The images name what catalog-operator would run in pods: registry pods for image and ConfigMap
	// catalogs, bundle unpack Jobs. A catalog with spec.address and bundles with inline objects need none.
	if err := o.start("catalog-operator", "catalog", []string{
		"--kubeconfig=" + cp.Kubeconfig, "--namespace=" + OLMNamespace,
		"--configmapServerImage=quay.io/operator-framework/configmap-operator-registry:latest",
		"--opmImage=quay.io/operator-framework/opm:latest",
		"--util-image=quay.io/operator-framework/olm:" + olmVersion(),
		"--set-workload-user-id=true",
	}, kubeconfig); err != nil {
		return nil, err
	}
	err = cp.waitFor(ctx, "olm-operator to process OperatorGroup "+GlobalOperatorGroup, 2*time.Minute, func(ctx context.Context) (bool, error) {
		og := &operatorsv1.OperatorGroup{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: OperatorsNamespace, Name: GlobalOperatorGroup}, og); err != nil {
			return false, nil
		}
		return og.Status.LastUpdated != nil, nil
	})
	if err != nil {
		return nil, err
	}
	return o, nil
}

// olmVersion is the version hack/olm.sh builds, for the util image's tag.
func olmVersion() string {
	if v := os.Getenv("OLM_VERSION"); v != "" {
		return v
	}
	return "v0.38.0"
}

// start runs one of OLM's binaries as a process of the control plane: Stop ends it, and the control plane's
// waits fail when it exits.
func (o *OLM) start(name, binary string, args []string, env ...string) error {
	p, err := startProcess(filepath.Join(o.cp.Dir, "logs"), name, filepath.Join(o.BinDir, binary), args, env)
	if err != nil {
		return err
	}
	o.cp.procs = append(o.cp.procs, p)
	o.cp.log("started %s (pid %d)", name, p.PID)
	return nil
}

// Client returns a controller-runtime client that knows OLM's kinds and the operator's.
func (o *OLM) Client() client.Client { return o.client }

// Stop ends every catalog server. olm-operator and catalog-operator end with the control plane.
func (o *OLM) Stop() {
	o.mu.Lock()
	catalogs := o.catalogs
	o.catalogs = nil
	o.mu.Unlock()
	for _, c := range catalogs {
		c.stop()
	}
}
