package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
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

// CatalogBundle is one bundle of a catalog's channel.
type CatalogBundle struct {
	// Dir is a bundle directory (manifests/ and metadata/), as `make bundle` writes bundle/.
	Dir string
	// Replaces is the CSV name of the bundle this one upgrades (the channel entry's replaces); empty for
	// the first.
	Replaces string
}

// Catalog is a file-based catalog served by opm and the CatalogSource in OLMNamespace that points at it.
type Catalog struct {
	olm *OLM
	// Name is the CatalogSource's name; Package and Channel the catalog's one package and channel.
	Name, Package, Channel string
	// RenderedImages is, by CSV name, the image `opm render` gave each bundle before it was blanked.
	RenderedImages map[string]string

	mu       sync.Mutex
	entries  []catalogEntry
	server   *process
	address  string
	revision int
}

type catalogEntry struct {
	name, replaces string
	bundle         map[string]any
}

// ServeCatalog renders the bundles into a file-based catalog of one package with one channel (the package
// and channel the first bundle's metadata names), serves it with `opm serve` on a loopback port, and
// creates the CatalogSource name in OLMNamespace with that address. It returns once catalog-operator
// reports the connection READY.
func (o *OLM) ServeCatalog(ctx context.Context, name string, bundles ...CatalogBundle) (*Catalog, error) {
	c := &Catalog{olm: o, Name: name, RenderedImages: map[string]string{}}
	if err := c.add(ctx, bundles); err != nil {
		return nil, err
	}
	o.mu.Lock()
	o.catalogs = append(o.catalogs, c)
	o.mu.Unlock()
	address, err := c.serve(ctx)
	if err != nil {
		return nil, err
	}
	source := &operatorsv1alpha1.CatalogSource{
		ObjectMeta: metav1.ObjectMeta{Namespace: OLMNamespace, Name: name},
		Spec: operatorsv1alpha1.CatalogSourceSpec{
			SourceType: operatorsv1alpha1.SourceTypeGrpc, Address: address, DisplayName: "gNMIc Operator (e2e)", Publisher: "e2e",
		},
	}
	if err := o.client.Create(ctx, source); err != nil {
		return nil, fmt.Errorf("create CatalogSource %s: %w", name, err)
	}
	return c, c.waitReady(ctx, address)
}

// Publish adds bundles to the channel, as a release adds them to a catalog image: a new catalog revision
// is served on a new port, the CatalogSource is pointed at it (as catalog-operator repoints a polled
// image catalog at its new registry pod), and once catalog-operator reports it READY the previous
// revision's server stops.
func (c *Catalog) Publish(ctx context.Context, bundles ...CatalogBundle) error {
	if err := c.add(ctx, bundles); err != nil {
		return err
	}
	c.mu.Lock()
	previous := c.server
	c.mu.Unlock()
	address, err := c.serve(ctx)
	if err != nil {
		return err
	}
	source := &operatorsv1alpha1.CatalogSource{}
	if err := c.olm.client.Get(ctx, client.ObjectKey{Namespace: OLMNamespace, Name: c.Name}, source); err != nil {
		return fmt.Errorf("get CatalogSource %s: %w", c.Name, err)
	}
	patch := client.MergeFrom(source.DeepCopy())
	source.Spec.Address = address
	if err := c.olm.client.Patch(ctx, source, patch); err != nil {
		return fmt.Errorf("point CatalogSource %s at %s: %w", c.Name, address, err)
	}
	if err := c.waitReady(ctx, address); err != nil {
		return err
	}
	if previous != nil {
		if err := previous.stop(10 * time.Second); err != nil {
			c.olm.cp.log("%v", err)
		}
	}
	return nil
}

// Address is where the current revision is served.
func (c *Catalog) Address() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.address
}

// add renders bundles with `opm render` and appends them to the channel.
func (c *Catalog) add(ctx context.Context, bundles []CatalogBundle) error {
	for _, b := range bundles {
		out, err := c.opm(ctx, "render", b.Dir, "--output=json")
		if err != nil {
			return err
		}
		bundle := map[string]any{}
		if err := json.Unmarshal(out, &bundle); err != nil {
			return fmt.Errorf("opm render %s: %w", b.Dir, err)
		}
		if bundle["schema"] != "olm.bundle" {
			return fmt.Errorf("opm render %s: want one olm.bundle, got schema %v", b.Dir, bundle["schema"])
		}
		name, _ := bundle["name"].(string)
		pkg, _ := bundle["package"].(string)
		image, _ := bundle["image"].(string)
		c.RenderedImages[name] = image
		// An empty image is what tells OLM the bundle's manifests are the catalog's olm.bundle.object
		// properties: nothing to pull, no unpack Job.
		bundle["image"] = ""
		objects := 0
		props, _ := bundle["properties"].([]any)
		for _, p := range props {
			if m, ok := p.(map[string]any); ok && m["type"] == "olm.bundle.object" {
				objects++
			}
		}
		if objects == 0 {
			return fmt.Errorf("opm render %s: bundle %s has no olm.bundle.object property", b.Dir, name)
		}
		channel, err := bundleChannel(b.Dir)
		if err != nil {
			return err
		}
		c.mu.Lock()
		if c.Package == "" {
			c.Package, c.Channel = pkg, channel
		}
		samePackage := c.Package == pkg && c.Channel == channel
		if samePackage {
			c.entries = append(c.entries, catalogEntry{name: name, replaces: b.Replaces, bundle: bundle})
		}
		c.mu.Unlock()
		if !samePackage {
			return fmt.Errorf("bundle %s is of package %s channel %s; the catalog holds %s channel %s", name, pkg, channel, c.Package, c.Channel)
		}
	}
	return nil
}

// bundleChannel is the default channel a bundle directory's metadata names.
func bundleChannel(dir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "metadata", "annotations.yaml"))
	if err != nil {
		return "", fmt.Errorf("bundle metadata: %w", err)
	}
	var meta struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(data, &meta); err != nil {
		return "", fmt.Errorf("bundle metadata %s: %w", dir, err)
	}
	channel := meta.Annotations["operators.operatorframework.io.bundle.channel.default.v1"]
	if channel == "" {
		channel, _, _ = strings.Cut(meta.Annotations["operators.operatorframework.io.bundle.channels.v1"], ",")
	}
	if channel == "" {
		return "", fmt.Errorf("bundle %s names no channel", dir)
	}
	return channel, nil
}

// serve writes the next catalog revision, checks it with `opm validate` and serves it on a free port.
func (c *Catalog) serve(ctx context.Context) (string, error) {
	c.mu.Lock()
	c.revision++
	revision := c.revision
	docs := []any{
		map[string]any{"schema": "olm.package", "name": c.Package, "defaultChannel": c.Channel},
	}
	var entries []any
	for _, e := range c.entries {
		entry := map[string]any{"name": e.name}
		if e.replaces != "" {
			entry["replaces"] = e.replaces
		}
		entries = append(entries, entry)
	}
	docs = append(docs, map[string]any{"schema": "olm.channel", "package": c.Package, "name": c.Channel, "entries": entries})
	for _, e := range c.entries {
		docs = append(docs, e.bundle)
	}
	c.mu.Unlock()

	dir := filepath.Join(c.olm.cp.Dir, "olm", "catalogs", fmt.Sprintf("%s-%d", c.Name, revision))
	catalogDir := filepath.Join(dir, "catalog", c.Package)
	if err := os.MkdirAll(catalogDir, 0o755); err != nil {
		return "", fmt.Errorf("catalog directory: %w", err)
	}
	var out bytes.Buffer
	for _, doc := range docs {
		data, err := yaml.Marshal(doc)
		if err != nil {
			return "", fmt.Errorf("encode catalog: %w", err)
		}
		out.WriteString("---\n")
		out.Write(data)
	}
	if err := os.WriteFile(filepath.Join(catalogDir, "catalog.yaml"), out.Bytes(), 0o644); err != nil {
		return "", fmt.Errorf("write catalog: %w", err)
	}
	if _, err := c.opm(ctx, "validate", filepath.Join(dir, "catalog")); err != nil {
		return "", err
	}
	ports, err := FreePorts(1)
	if err != nil {
		return "", err
	}
	port := strconv.Itoa(ports[0])
	tmp := filepath.Join(dir, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return "", fmt.Errorf("catalog cache directory: %w", err)
	}
	// opm serve listens on every address of the host (":port"); the CatalogSource names loopback. Its
	// cache goes to a temporary directory under TMPDIR, its profiling endpoint is off.
	p, err := startProcess(filepath.Join(c.olm.cp.Dir, "logs"), fmt.Sprintf("opm-%s-%d", c.Name, revision),
		filepath.Join(c.olm.BinDir, "opm"),
		[]string{"serve", filepath.Join(dir, "catalog"), "--port=" + port, "--pprof-addr=", "--termination-log=" + filepath.Join(dir, "termination-log")},
		[]string{"TMPDIR=" + tmp})
	if err != nil {
		return "", err
	}
	address := net.JoinHostPort("127.0.0.1", port)
	c.olm.cp.log("serving catalog %s revision %d (%s) with opm (pid %d) on %s", c.Name, revision, c.describe(), p.PID, address)
	deadline := time.Now().Add(time.Minute)
	for {
		conn, err := net.DialTimeout("tcp", address, time.Second)
		if err == nil {
			conn.Close()
			break
		}
		if done, perr := p.exited(); done {
			return "", fmt.Errorf("opm serve exited (%v), see its log in %s", perr, filepath.Join(c.olm.cp.Dir, "logs"))
		}
		if time.Now().After(deadline) {
			_ = p.stop(time.Second)
			return "", fmt.Errorf("opm serve does not listen on %s after a minute", address)
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.mu.Lock()
	c.server, c.address = p, address
	c.mu.Unlock()
	return address, nil
}

// describe renders the channel's entries, "alpha: a, b (replaces a)".
func (c *Catalog) describe() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	parts := make([]string, 0, len(c.entries))
	for _, e := range c.entries {
		if e.replaces != "" {
			parts = append(parts, e.name+" (replaces "+e.replaces+")")
		} else {
			parts = append(parts, e.name)
		}
	}
	return c.Channel + ": " + strings.Join(parts, ", ")
}

func (c *Catalog) waitReady(ctx context.Context, address string) error {
	return c.olm.cp.waitFor(ctx, "CatalogSource "+c.Name+" READY at "+address, 2*time.Minute, func(ctx context.Context) (bool, error) {
		source := &operatorsv1alpha1.CatalogSource{}
		if err := c.olm.client.Get(ctx, client.ObjectKey{Namespace: OLMNamespace, Name: c.Name}, source); err != nil {
			return false, nil
		}
		s := source.Status.GRPCConnectionState
		return s != nil && s.Address == address && s.LastObservedState == "READY", nil
	})
}

// opm runs the opm binary and returns its standard output.
func (c *Catalog) opm(ctx context.Context, args ...string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, filepath.Join(c.olm.BinDir, "opm"), args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("opm %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes(), nil
}

func (c *Catalog) stop() {
	c.mu.Lock()
	server := c.server
	c.server = nil
	c.mu.Unlock()
	if server != nil {
		if err := server.stop(10 * time.Second); err != nil {
			c.olm.cp.log("%v", err)
		}
	}
}

// RunOperatorDeployment runs the pods of the operator's Deployment that OLM created in namespace through
// the pod emulator, as StartOperator does for the manifests it applies: it waits up to timeout for the
// Deployment, reads its selector and pod template from the cluster, and starts the emulator on the pods
// of its namespace that match the selector, with the operator binary as the image (opts.Binary; the
// other options do not apply, OLM decides the Deployment). The pods' containers run with the token of
// the ServiceAccount OLM created and the environment OLM's pod template gives, WATCH_NAMESPACE from the
// olm.targetNamespaces annotation included. An earlier operator's emulator is stopped first. It returns
// once the emulator runs; WaitForOperator waits for the replicas and the metrics APIs.
func (cp *ControlPlane) RunOperatorDeployment(ctx context.Context, namespace, name string, opts OperatorOptions, timeout time.Duration) error {
	binary, err := operatorBinary(opts.Binary)
	if err != nil {
		return err
	}
	if err := checkStatic(binary); err != nil {
		return err
	}
	var deployment *appsv1.Deployment
	err = cp.waitFor(ctx, "Deployment "+namespace+"/"+name, timeout, func(ctx context.Context) (bool, error) {
		d, err := cp.Clientset.AppsV1().Deployments(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		deployment = d
		return true, nil
	})
	if err != nil {
		return err
	}
	selector, err := metav1.LabelSelectorAsSelector(deployment.Spec.Selector)
	if err != nil {
		return fmt.Errorf("Deployment %s selector: %w", name, err)
	}
	api, err := url.Parse(cp.Config.Host)
	if err != nil {
		return fmt.Errorf("kube-apiserver address %s: %w", cp.Config.Host, err)
	}
	quiet := rest.CopyConfig(cp.Config)
	quiet.WarningHandler = rest.NoWarnings{}
	clientset, err := kubernetes.NewForConfig(quiet)
	if err != nil {
		return fmt.Errorf("clientset: %w", err)
	}
	if cp.operator != nil {
		cp.operator.emulator.stop()
		cp.operator = nil
	}
	dir := filepath.Join(cp.Dir, "operator-"+namespace)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	emulator, err := startPodEmulator(context.WithoutCancel(ctx), emulatorConfig{
		client: clientset, host: containerHost{client: clientset, apiHost: api.Hostname(), apiPort: api.Port()},
		image: OperatorImage(binary), namespace: namespace, selector: selector,
		dir: filepath.Join(dir, "pods"), logDir: filepath.Join(cp.Dir, "logs"), log: cp.log,
	})
	if err != nil {
		return err
	}
	if err := startReadinessGuard(emulator.ctx, clientset, namespace, selector, cp.log); err != nil {
		emulator.stop()
		return err
	}
	replicas := 1
	if deployment.Spec.Replicas != nil {
		replicas = int(*deployment.Spec.Replicas)
	}
	cp.operator = &operatorRun{install: &operatorInstall{deployment: deployment}, emulator: emulator, replicas: replicas}
	cp.log("pod emulator runs the pods of Deployment %s/%s (%s)", namespace, name, selector)
	return nil
}

// startReadinessGuard keeps the emulated pods of namespace that match selector from being Ready before their
// container ran, until ctx ends. kwok's pod-ready stage marks a pod Running and Ready as it starts it; the
// emulator's first status report, when it starts the container a few hundred milliseconds later, sets Ready
// back to False until the readiness probe passes. A kubelet never reports a pod Ready before its probe. In
// that window the ReplicaSet controller counts the pod available, so a Deployment's rolling update (OLM's
// upgrade) deletes an old pod before its replacement is ready, OLM sees the Deployment available (a CSV
// goes Succeeded, then Failed when the emulator reports the truth), and the aggregation layer may send a
// metrics request to a pod with no process. The guard answers kwok's status at once, as a kubelet would
// have reported it: Ready and ContainersReady False while no container was reported. It writes only over
// kwok's status (a resourceVersion precondition; once the emulator reported a container it never acts)
// and never sets anything Ready, so the window shrinks from the emulator's start-up time to one watch event.
func startReadinessGuard(ctx context.Context, clientset kubernetes.Interface, namespace string, selector labels.Selector, log func(string, ...any)) error {
	factory := informers.NewSharedInformerFactoryWithOptions(clientset, 0, informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector.String() }))
	pods := factory.Core().V1().Pods().Informer()
	guard := func(obj any) {
		pod, ok := obj.(*corev1.Pod)
		if !ok || !readyWithoutContainer(pod) {
			return
		}
		now := metav1.Now()
		conditions := []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", LastTransitionTime: now},
		}
		patch, err := json.Marshal(map[string]any{
			"metadata": map[string]any{"resourceVersion": pod.ResourceVersion},
			"status":   map[string]any{"conditions": conditions},
		})
		if err != nil {
			return
		}
		_, err = clientset.CoreV1().Pods(namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
		switch {
		case err == nil:
			log("pod %s: kwok marked it Ready before its container ran; reported not ready, as a kubelet would", pod.Name)
		case !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) && ctx.Err() == nil:
			log("pod %s: report not ready: %v", pod.Name, err)
		}
	}
	if _, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    guard,
		UpdateFunc: func(_, obj any) { guard(obj) },
	}); err != nil {
		return fmt.Errorf("watch pods: %w", err)
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), pods.HasSynced) {
		return fmt.Errorf("readiness guard informer did not sync")
	}
	return nil
}

// readyWithoutContainer: the pod is Ready but no container status names a container (kwok's status; the
// emulator reports its containers with an ID).
func readyWithoutContainer(pod *corev1.Pod) bool {
	if pod.DeletionTimestamp != nil || !podIsReady(pod) {
		return false
	}
	for _, c := range pod.Status.ContainerStatuses {
		if c.ContainerID != "" {
			return false
		}
	}
	return true
}

// WaitForOperator waits until as many operator pods as the Deployment asks for run a ready container and
// kube-apiserver reports the custom and external metrics APIServices available.
func (cp *ControlPlane) WaitForOperator(ctx context.Context) error {
	if cp.operator == nil {
		return fmt.Errorf("the operator is not running")
	}
	if err := cp.waitForOperatorReplicas(ctx); err != nil {
		return err
	}
	return cp.waitForMetricsAPIs(ctx)
}

// StopOperatorEmulator stops the pod emulator (every container it runs ends, SIGTERM then SIGKILL after
// 10 s), for example once OLM removed the operator.
func (cp *ControlPlane) StopOperatorEmulator() {
	if cp.operator != nil {
		cp.operator.emulator.stop()
		cp.operator = nil
	}
}

// ProcessArgv is the command line of a process (a replica's container: its sandbox executes the binary).
func ProcessArgv(pid int) ([]string, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00"), nil
}

// ProcessEnv is the environment of a process, by name.
func ProcessEnv(pid int) (map[string]string, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	if err != nil {
		return nil, err
	}
	env := map[string]string{}
	for _, kv := range strings.Split(string(data), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env, nil
}

// OLMPhase is one change of an OLM object the watcher saw.
type OLMPhase struct {
	At   time.Time
	Kind string
	// Object is namespace/name.
	Object string
	// Phase is the object's state: a Subscription's status.state, an InstallPlan's status.phase, a CSV's
	// status.phase, a Job's creation; "deleted" once it is gone.
	Phase string
	// Detail is the rest of its summary (current and installed CSV, approval, reason, message…).
	Detail string
}

// OLMWatch records and logs the Subscriptions, InstallPlans and ClusterServiceVersions (not OLM's copies
// of a CSV in the target namespaces) of the cluster as their state changes, and every Job created.
type OLMWatch struct {
	mu     sync.Mutex
	phases []OLMPhase
	last   map[string]string
	jobs   []string
	cancel context.CancelFunc
	log    func(format string, args ...any)
	start  time.Time
}

// WatchOLM starts an OLMWatch that logs with logf until Stop.
func (o *OLM) WatchOLM(ctx context.Context, logf func(format string, args ...any)) (*OLMWatch, error) {
	ctx, cancel := context.WithCancel(ctx)
	w := &OLMWatch{last: map[string]string{}, cancel: cancel, log: logf, start: time.Now()}
	kinds := []struct {
		obj     client.Object
		kind    string
		summary func(client.Object) (string, string, bool)
	}{
		{&operatorsv1alpha1.Subscription{}, "Subscription", subscriptionSummary},
		{&operatorsv1alpha1.InstallPlan{}, "InstallPlan", installPlanSummary},
		{&operatorsv1alpha1.ClusterServiceVersion{}, "ClusterServiceVersion", csvSummary},
	}
	objects, err := crcache.New(o.cp.Config, crcache.Options{Scheme: OLMScheme()})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("cache: %w", err)
	}
	for _, k := range kinds {
		informer, err := objects.GetInformer(ctx, k.obj)
		if err != nil {
			cancel()
			return nil, fmt.Errorf("informer for %ss: %w", k.kind, err)
		}
		kind, summary := k.kind, k.summary
		if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { w.observe(kind, obj, summary) },
			UpdateFunc: func(_, obj any) { w.observe(kind, obj, summary) },
			DeleteFunc: func(obj any) {
				if m, ok := deletedObject(obj).(client.Object); ok {
					w.record(kind, m.GetNamespace()+"/"+m.GetName(), "deleted", "")
				}
			},
		}); err != nil {
			cancel()
			return nil, err
		}
	}
	go func() {
		if err := objects.Start(ctx); err != nil {
			o.cp.log("OLM watch: %v", err)
		}
	}()
	if !objects.WaitForCacheSync(ctx) {
		cancel()
		return nil, fmt.Errorf("OLM watch did not sync")
	}
	jobs := informers.NewSharedInformerFactory(o.cp.Clientset, 0).Batch().V1().Jobs().Informer()
	if _, err := jobs.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		if j, ok := obj.(*batchv1.Job); ok {
			w.mu.Lock()
			w.jobs = append(w.jobs, j.Namespace+"/"+j.Name)
			w.mu.Unlock()
			w.record("Job", j.Namespace+"/"+j.Name, "created", "")
		}
	}}); err != nil {
		cancel()
		return nil, err
	}
	go jobs.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), jobs.HasSynced) {
		cancel()
		return nil, fmt.Errorf("OLM watch did not sync")
	}
	return w, nil
}

func (w *OLMWatch) observe(kind string, obj any, summary func(client.Object) (string, string, bool)) {
	o, ok := obj.(client.Object)
	if !ok {
		return
	}
	phase, detail, show := summary(o)
	if show {
		w.record(kind, o.GetNamespace()+"/"+o.GetName(), phase, detail)
	}
}

func (w *OLMWatch) record(kind, object, phase, detail string) {
	key := kind + " " + object
	w.mu.Lock()
	if w.last[key] == phase+" "+detail {
		w.mu.Unlock()
		return
	}
	w.last[key] = phase + " " + detail
	p := OLMPhase{At: time.Now(), Kind: kind, Object: object, Phase: phase, Detail: detail}
	w.phases = append(w.phases, p)
	w.mu.Unlock()
	if w.log != nil {
		if detail != "" {
			detail = " (" + detail + ")"
		}
		w.log("OLM %7.1fs  %s %s: %s%s", p.At.Sub(w.start).Seconds(), kind, object, phase, detail)
	}
}

// Phases returns what was seen so far.
func (w *OLMWatch) Phases() []OLMPhase {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]OLMPhase(nil), w.phases...)
}

// Jobs lists every Job created since the watch began, as namespace/name.
func (w *OLMWatch) Jobs() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.jobs...)
}

// Stop ends the watch.
func (w *OLMWatch) Stop() { w.cancel() }

func subscriptionSummary(obj client.Object) (string, string, bool) {
	s, ok := obj.(*operatorsv1alpha1.Subscription)
	if !ok {
		return "", "", false
	}
	state := string(s.Status.State)
	if state == "" {
		state = "(no state)"
	}
	detail := []string{"currentCSV=" + s.Status.CurrentCSV, "installedCSV=" + s.Status.InstalledCSV}
	if s.Status.InstallPlanRef != nil {
		detail = append(detail, "installPlan="+s.Status.InstallPlanRef.Name)
	}
	if s.Status.Reason != "" {
		detail = append(detail, "reason="+string(s.Status.Reason))
	}
	for _, c := range s.Status.Conditions {
		if c.Status != corev1.ConditionTrue || c.Type == operatorsv1alpha1.SubscriptionCatalogSourcesUnhealthy {
			continue
		}
		if c.Type == operatorsv1alpha1.SubscriptionResolutionFailed && c.Message != "" {
			detail = append(detail, string(c.Type)+": "+c.Message)
			continue
		}
		detail = append(detail, string(c.Type))
	}
	return state, strings.Join(detail, " "), true
}

func installPlanSummary(obj client.Object) (string, string, bool) {
	p, ok := obj.(*operatorsv1alpha1.InstallPlan)
	if !ok {
		return "", "", false
	}
	phase := string(p.Status.Phase)
	if phase == "" {
		phase = "(no phase)"
	}
	detail := []string{"csv=" + strings.Join(p.Spec.ClusterServiceVersionNames, ","),
		"approval=" + string(p.Spec.Approval), "approved=" + strconv.FormatBool(p.Spec.Approved),
		fmt.Sprintf("steps=%d", len(p.Status.Plan)), fmt.Sprintf("bundleLookups=%d", len(p.Status.BundleLookups))}
	if p.Status.Message != "" {
		detail = append(detail, "message="+p.Status.Message)
	}
	return phase, strings.Join(detail, " "), true
}

func csvSummary(obj client.Object) (string, string, bool) {
	c, ok := obj.(*operatorsv1alpha1.ClusterServiceVersion)
	if !ok || c.Labels[operatorsv1alpha1.CopiedLabelKey] != "" {
		return "", "", false
	}
	phase := string(c.Status.Phase)
	if phase == "" {
		phase = "(no phase)"
	}
	detail := []string{}
	if c.Status.Reason != "" {
		detail = append(detail, "reason="+string(c.Status.Reason))
	}
	if c.Status.Phase != operatorsv1alpha1.CSVPhaseSucceeded && c.Status.Message != "" {
		detail = append(detail, "message="+c.Status.Message)
	}
	if c.DeletionTimestamp != nil {
		detail = append(detail, "deleting")
	}
	return phase, strings.Join(detail, " "), true
}

// InstallPlanFor returns the InstallPlans of namespace that install csv, newest first.
func (o *OLM) InstallPlanFor(ctx context.Context, namespace, csv string) ([]operatorsv1alpha1.InstallPlan, error) {
	var list operatorsv1alpha1.InstallPlanList
	if err := o.client.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	var out []operatorsv1alpha1.InstallPlan
	for _, p := range list.Items {
		for _, name := range p.Spec.ClusterServiceVersionNames {
			if name == csv {
				out = append(out, p)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[j].CreationTimestamp.Before(&out[i].CreationTimestamp) })
	return out, nil
}

// ApproveInstallPlan approves an InstallPlan of Manual approval.
func (o *OLM) ApproveInstallPlan(ctx context.Context, namespace, name string) error {
	plan := &operatorsv1alpha1.InstallPlan{}
	if err := o.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, plan); err != nil {
		return err
	}
	patch := client.MergeFrom(plan.DeepCopy())
	plan.Spec.Approved = true
	if err := o.client.Patch(ctx, plan, patch); err != nil {
		return fmt.Errorf("approve InstallPlan %s/%s: %w", namespace, name, err)
	}
	return nil
}
