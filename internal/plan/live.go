package plan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/selection"
)

// liveFlags are the flags of `plan --cluster`.
type liveFlags struct {
	cluster     types.NamespacedName
	overrides   overrides
	kubeconfig  string
	context     string
	timeout     time.Duration
	format      string
	clusterFlag string
}

// runLive answers `plan --cluster`: it reads the Cluster with the user's kubeconfig and prints the plan.
func runLive(f liveFlags, stdout, stderr io.Writer) int {
	cfg, err := restConfig(f.kubeconfig, f.context)
	if err != nil {
		return fail(stderr, exitFailure, err)
	}
	cfg.Timeout = f.timeout
	ctx, cancel := context.WithTimeout(context.Background(), f.timeout)
	defer cancel()
	a, err := PlanCluster(ctx, cfg, f.cluster, f.overrides)
	if err != nil {
		return fail(stderr, exitFailure, err)
	}
	if f.format == "table" {
		err = writeLiveTable(stdout, a)
	} else {
		err = writeLiveJSON(stdout, a)
	}
	if err != nil {
		return fail(stderr, exitFailure, fmt.Errorf("write answer: %w", err))
	}
	return exitOK
}

// restConfig loads the user's kubeconfig by kubectl's rules: the --kubeconfig file, else the files of
// $KUBECONFIG, else ~/.kube/config, else the in-cluster configuration of a pod; --context picks a context.
func restConfig(kubeconfig, kubeContext string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
		&clientcmd.ConfigOverrides{CurrentContext: kubeContext}).ClientConfig()
	switch {
	case clientcmd.IsEmptyConfig(err):
		return nil, errors.New("no kubeconfig: give --kubeconfig, set KUBECONFIG, or write ~/.kube/config")
	case err != nil:
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	return cfg, nil
}

// PlanCluster reads the Cluster key with cfg's identity and plans it with the overrides (see planLive).
func PlanCluster(ctx context.Context, cfg *rest.Config, key types.NamespacedName, o overrides) (liveAnswer, error) {
	scheme := runtime.NewScheme()
	if err := operatorv1alpha1.AddToScheme(scheme); err != nil {
		return liveAnswer{}, fmt.Errorf("build scheme: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return liveAnswer{}, fmt.Errorf("connect to %s: %w", cfg.Host, err)
	}
	objs, err := readLive(ctx, c, key)
	if err != nil {
		return liveAnswer{}, err
	}
	return planLive(objs, o)
}

// liveObjects are what planLive needs of a namespace: the Cluster, and what selects its targets (Pipelines,
// Targets and Subscriptions; a Pipeline selecting targets without a subscription selects none of them).
// Outputs, Inputs, TargetProfiles and Secrets play no part in which targets a Cluster selects, and are not
// read.
type liveObjects struct {
	cluster *operatorv1alpha1.Cluster
	objects selection.Objects
}

// readLive reads the Cluster and the objects of its namespace that select its targets.
func readLive(ctx context.Context, c client.Reader, key types.NamespacedName) (liveObjects, error) {
	cluster := &operatorv1alpha1.Cluster{}
	if err := c.Get(ctx, key, cluster); err != nil {
		if apierrors.IsNotFound(err) && !noKind(err) {
			return liveObjects{}, fmt.Errorf("cluster %s not found", key)
		}
		return liveObjects{}, apiError("get", "clusters", key.Namespace, err)
	}
	var (
		pipelines operatorv1alpha1.PipelineList
		targets   operatorv1alpha1.TargetList
		subs      operatorv1alpha1.SubscriptionList
	)
	for _, l := range []struct {
		resource string
		list     client.ObjectList
	}{
		{"pipelines", &pipelines},
		{"targets", &targets},
		{"subscriptions", &subs},
	} {
		if err := c.List(ctx, l.list, client.InNamespace(key.Namespace)); err != nil {
			return liveObjects{}, apiError("list", l.resource, key.Namespace, err)
		}
	}
	return liveObjects{cluster: cluster, objects: selection.Objects{
		Pipelines: pipelines.Items, Targets: targets.Items, Subscriptions: subs.Items,
	}}, nil
}

// apiError says which read failed and, when RBAC forbade it, which permission is missing.
func apiError(verb, resource, namespace string, err error) error {
	qualified := resource + "." + operatorv1alpha1.GroupVersion.Group
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Errorf("forbidden: your kubeconfig's user may not %s %s in namespace %s (needs verb %q on resource %q of API group %q): %w",
			verb, qualified, namespace, verb, resource, operatorv1alpha1.GroupVersion.Group, err)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("unauthorized: the API server did not accept your kubeconfig's credentials: %w", err)
	case noKind(err):
		return fmt.Errorf("%s are not served by this API server: are the gnmic-operator CRDs installed? %w", qualified, err)
	}
	return fmt.Errorf("%s %s in namespace %s: %w", verb, qualified, namespace, err)
}

// noKind tells whether err says the API server does not know the kind at all.
func noKind(err error) bool {
	return meta.IsNoMatchError(err) || strings.Contains(err.Error(), "the server could not find the requested resource")
}
