package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/balancer"
	"github.com/gnmic-operator/gnmic-operator/controllers/cluster"
	"github.com/gnmic-operator/gnmic-operator/controllers/collector"
	"github.com/gnmic-operator/gnmic-operator/controllers/sharding"
	"github.com/gnmic-operator/gnmic-operator/controllers/targetsource"
	"github.com/gnmic-operator/gnmic-operator/controllers/tunnelpolicy"
	"github.com/gnmic-operator/gnmic-operator/metricsadapter"
	"github.com/gnmic-operator/gnmic-operator/pushendpoint"
)

// newScheme knows the built-in kinds and the operator's own.
func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(operatorv1alpha1.AddToScheme(s))
	return s
}

// run builds the manager from the options, registers the controllers and blocks until ctx ends.
func run(ctx context.Context, o options) error {
	log := ctrl.Log.WithName("setup")
	if err := o.validate(); err != nil {
		return err
	}

	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("load kubeconfig: %w", err)
	}
	cfg.QPS = float32(o.kubeAPIQPS)
	cfg.Burst = o.kubeAPIBurst

	mgr, err := ctrl.NewManager(cfg, managerOptions(o))
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("add health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return fmt.Errorf("add ready check: %w", err)
	}

	reconciler := &cluster.Reconciler{
		Client:                  mgr.GetClient(),
		APIReader:               mgr.GetAPIReader(),
		Scheme:                  mgr.GetScheme(),
		Recorder:                mgr.GetEventRecorderFor("gnmic-operator"),
		Dialer:                  &collector.PodIPDialer{HTTP: collector.DefaultHTTPClient()},
		PollInterval:            o.collectorPollInterval,
		MaxConcurrentReconciles: o.maxConcurrentRecons,
		BatchSize:               o.collectorBatchSize,
		DropTimeout:             o.handoverDropTimeout,
		RepairAfter:             o.collectorRepairAfter,
		CollectorSilence:        o.collectorSilence,
	}
	var balancerShard balancer.Assigner         // nil: this replica runs every Balancer
	var targetSourceShard targetsource.Assigner // nil: this replica syncs every TargetSource
	if o.sharding {
		member, err := newShardMember(mgr, o)
		if err != nil {
			return err
		}
		reconciler.Sharding = member
		reconciler.Client = member.Client(reconciler.Client) // the objects of its share, from its caches
		reconciler.Dialer = &collector.PodIPDialer{HTTP: collector.DefaultHTTPClient(),
			UserAgent: collector.MemberUserAgent(member.Identity)}
		balancerShard, targetSourceShard = member, member
		log.Info("sharding: this replica reconciles its share of the Clusters", "member", member.Identity)
		if err := mgr.Add(member); err != nil {
			return fmt.Errorf("add operator sharding: %w", err)
		}
		// Ready once it holds its share: a rolling update replaces the next replica only then.
		if err := mgr.AddReadyzCheck("share", member.HoldsShare); err != nil {
			return fmt.Errorf("add the share's ready check: %w", err)
		}
		// A container restarted in this pod: the process before it is gone; its Clusters need not wait for its
		// Lease to run out, nor for this one's caches.
		member.MarkPredecessorsDead(ctx)
	}
	if err := reconciler.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up cluster controller: %w", err)
	}
	if err := setupBalancer(mgr, balancerShard); err != nil {
		return err
	}
	if err := (&tunnelpolicy.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up tunnel target policy controller: %w", err)
	}
	if err := setupTargetSource(mgr, targetSourceShard); err != nil {
		return err
	}

	if o.watchNamespace != "" {
		o.metricsAPI.WatchNamespaces = strings.Split(o.watchNamespace, ",")
	}
	metricsAPI, err := metricsadapter.Setup(ctx, mgr, o.metricsAPI)
	if err != nil {
		return fmt.Errorf("set up metrics APIs: %w", err)
	}

	o.targetSourcePush.DrainPeriod = o.metricsAPI.DrainPeriod
	if err := pushendpoint.Setup(ctx, mgr, o.targetSourcePush, o.metricsAPI.WatchNamespaces); err != nil {
		return fmt.Errorf("set up the TargetSource push endpoint: %w", err)
	}

	log.Info("starting manager", "leaderElection", o.leaderElect, "metrics", o.metricsAddr, "probes", o.probeAddr)
	runErr := mgr.Start(ctx)
	// The manager stopped the metrics API first and did not wait for its drain, which went on while the
	// rest stopped: the process exits once the drain is over and the port closed.
	waitCtx, cancel := shutdownContext(o.gracefulShutdownTime, o.metricsAPI.DrainPeriod)
	defer cancel()
	if err := metricsAPI.Wait(waitCtx); err != nil {
		log.Error(err, "exiting before the metrics API closed its port")
	}
	if runErr != nil {
		return fmt.Errorf("run manager: %w", runErr)
	}
	return nil
}

// shutdownContext bounds the wait for the metrics API's drain after the manager stopped: by the graceful
// shutdown timeout (the drain is no longer), never when that timeout is negative (wait for ever, as the
// manager does).
func shutdownContext(graceful, drain time.Duration) (context.Context, context.CancelFunc) {
	if graceful < 0 {
		return context.WithCancel(context.Background())
	}
	return context.WithTimeout(context.Background(), max(graceful, drain))
}

func managerOptions(o options) ctrl.Options {
	var tlsOpts []func(*tls.Config)
	if !o.enableHTTP2 {
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}

	metrics := metricsserver.Options{
		BindAddress:   o.metricsAddr,
		SecureServing: o.metricsSecure,
		TLSOpts:       tlsOpts,
	}
	if o.metricsSecure {
		metrics.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	if o.metricsCertPath != "" {
		metrics.CertDir = o.metricsCertPath
		metrics.CertName = o.metricsCertName
		metrics.KeyName = o.metricsCertKey
	}

	opts := ctrl.Options{
		Scheme:                        newScheme(),
		Metrics:                       metrics,
		HealthProbeBindAddress:        o.probeAddr,
		PprofBindAddress:              o.pprofAddr,
		LeaderElection:                o.leaderElect && !o.sharding, // sharding shares the Clusters instead
		LeaderElectionID:              o.leaderElectionID,
		LeaderElectionNamespace:       o.leaderElectionNS,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &o.leaseDuration,
		RenewDeadline:                 &o.renewDeadline,
		RetryPeriod:                   &o.retryPeriod,
		GracefulShutdownTimeout:       &o.gracefulShutdownTime,
	}
	opts.Cache = cluster.CacheOptions()
	if o.sharding {
		opts.Cache.ByObject = sharding.CacheByObject(opts.Cache.ByObject)
	}
	if o.watchNamespace != "" {
		namespaces := map[string]cache.Config{}
		for _, ns := range strings.Split(o.watchNamespace, ",") {
			namespaces[strings.TrimSpace(ns)] = cache.Config{}
		}
		opts.Cache.DefaultNamespaces = namespaces
	}
	return opts
}
