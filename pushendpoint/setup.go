package pushendpoint

import (
	"context"
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// Setup registers the push endpoint's server, its certificate keeping and its readiness check
// ("targetsource-push") with the manager; every replica serves. watchNamespaces are the namespaces the
// operator watches (empty: every one). Nothing is registered when the endpoint is switched off.
func Setup(ctx context.Context, mgr ctrl.Manager, opts Options, watchNamespaces []string) error {
	if !opts.Enabled {
		return nil
	}
	if opts.MaxBodyBytes < 1 {
		return fmt.Errorf("--targetsource-push-max-body-bytes=%d: must be positive", opts.MaxBodyBytes)
	}
	// The informer starts with the cache rather than at the first post (see metricsadapter.Setup); it also
	// keeps the series of each push TargetSource's posts.
	informer, err := mgr.GetCache().GetInformer(ctx, &operatorv1alpha1.TargetSource{})
	if err != nil {
		return fmt.Errorf("informer of TargetSources for the push endpoint: %w", err)
	}
	if _, err := informer.AddEventHandler(postSeries{}); err != nil {
		return fmt.Errorf("keep the push endpoint's series: %w", err)
	}
	cert := newServingCertificate(mgr.GetAPIReader(), mgr.GetClient(), opts)
	if err := mgr.Add(cert); err != nil {
		return fmt.Errorf("add the push endpoint's certificate: %w", err)
	}
	server := &Server{
		address: opts.BindAddress,
		cert:    cert,
		drain:   opts.DrainPeriod,
		handler: &handler{
			sources: &kubeSources{cache: mgr.GetClient(), reader: mgr.GetAPIReader(), namespaces: watchNamespaces,
				maxBody: opts.MaxBodyBytes},
			snapshots: &snapshotStore{reader: mgr.GetAPIReader(), writer: mgr.GetClient(), maxDecoded: maxStoredBytes, now: time.Now},
			notify:    &kubeNotifier{writer: mgr.GetClient(), recorder: mgr.GetEventRecorderFor("gnmic-operator")},
			slots:     make(chan struct{}, maxConcurrentPosts),
		},
	}
	if err := mgr.Add(server); err != nil {
		return fmt.Errorf("add the push endpoint: %w", err)
	}
	// Ready once it serves: the Service routes posts to ready replicas only.
	if err := mgr.AddReadyzCheck("targetsource-push", server.Ready); err != nil {
		return fmt.Errorf("add the push endpoint's ready check: %w", err)
	}
	return nil
}
