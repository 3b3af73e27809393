package metricsadapter

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// Setup registers the metrics API server, its readiness check ("metrics-api"), its certificate keeping and
// its APIService registration with the manager. Call it before mgr.Start, and the returned server's Wait
// once mgr.Start has returned: the server drains while the manager stops the rest. Nothing is registered,
// and the server is nil (its Wait returns at once), when both APIs are switched off.
func Setup(ctx context.Context, mgr ctrl.Manager, opts Options) (*Server, error) {
	if !opts.Enabled() {
		return nil, nil
	}
	if err := IndexPodsByCluster(ctx, mgr.GetFieldIndexer()); err != nil {
		return nil, err
	}
	// The providers read Clusters and pods from the manager's cache (the index above made the pods' informer).
	// Made now, the Clusters' informer starts with the cache, which the manager syncs before it starts the
	// server; made by the first request, it would start then, and a replica asked for the first time while
	// it stops (a pod deleted seconds after it became ready, as a rollout that also scales does) would wait on
	// an informer that never syncs until the request times out, in the middle of its drain.
	if _, err := mgr.GetCache().GetInformer(ctx, &operatorv1alpha1.Cluster{}); err != nil {
		return nil, fmt.Errorf("informer of Clusters for the metrics API: %w", err)
	}
	custom, external := NewProviders(mgr.GetCache(), true, opts.WatchNamespaces...)
	placement.use(mgr.GetCache())

	// The providers are interfaces left nil (not typed nils) for a switched-off API.
	server := &Server{opts: opts, restConfig: mgr.GetConfig()}
	if opts.CustomMetrics {
		server.custom = custom
	}
	if opts.ExternalMetrics {
		server.external = external
	}

	caBundle := func(context.Context) ([]byte, error) { return opts.CABundle, nil }
	if opts.ManageCertificate {
		if err := ensureCertSecret(ctx, mgr, opts); err != nil {
			return nil, err
		}
		if err := addCertRotator(mgr, opts); err != nil {
			return nil, err
		}
		files := newCertFiles(mgr.GetAPIReader(), opts)
		if err := mgr.Add(files); err != nil {
			return nil, fmt.Errorf("add metrics API certificate files: %w", err)
		}
		server.certsReady = files.Ready()
		caBundle = func(ctx context.Context) ([]byte, error) {
			var secret corev1.Secret
			if err := mgr.GetAPIReader().Get(ctx, opts.certSecretKey(), &secret); err != nil {
				if apierrors.IsNotFound(err) {
					return nil, nil
				}
				return nil, fmt.Errorf("get secret %s: %w", opts.certSecretKey(), err)
			}
			return secret.Data[caFileName], nil
		}
	} else {
		ready := make(chan struct{})
		close(ready)
		server.certsReady = ready
	}
	if err := mgr.Add(server); err != nil {
		return nil, fmt.Errorf("add metrics API server: %w", err)
	}
	// Ready once the metrics API serves, not ready from the moment it drains: kube-apiserver reaches it
	// through the Service, which routes to ready replicas only.
	if err := mgr.AddReadyzCheck("metrics-api", server.Ready); err != nil {
		return nil, fmt.Errorf("add metrics API ready check: %w", err)
	}

	if opts.ManageAPIServices {
		registrar := &apiServiceRegistrar{
			reader:   mgr.GetAPIReader(),
			writer:   mgr.GetClient(),
			recorder: mgr.GetEventRecorder("gnmic-operator-metrics-api"),
			versions: servedVersions(opts),
			service:  types.NamespacedName{Namespace: opts.ServiceNamespace, Name: opts.ServiceName},
			port:     int32(opts.ServicePort),
			period:   opts.ResyncPeriod,
			caBundle: caBundle,
			owners:   &installOwners{reader: mgr.GetAPIReader(), writer: mgr.GetClient()},
		}
		if err := mgr.Add(registrar); err != nil {
			return nil, fmt.Errorf("add metrics APIService registrar: %w", err)
		}
	}
	return server, nil
}
