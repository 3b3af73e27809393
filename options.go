package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/gnmic-operator/gnmic-operator/controllers/cluster"
	"github.com/gnmic-operator/gnmic-operator/metricsadapter"
	"github.com/gnmic-operator/gnmic-operator/pushendpoint"
)

// options are the operator's command-line flags. docs/operating.md describes each one.
type options struct {
	metricsAddr           string
	metricsSecure         bool
	metricsCertPath       string
	metricsCertName       string
	metricsCertKey        string
	probeAddr             string
	pprofAddr             string
	enableHTTP2           bool
	leaderElect           bool
	leaderElectionID      string
	leaderElectionNS      string
	leaseDuration         time.Duration
	renewDeadline         time.Duration
	retryPeriod           time.Duration
	kubeAPIQPS            float64
	kubeAPIBurst          int
	watchNamespace        string
	maxConcurrentRecons   int
	gracefulShutdownTime  time.Duration
	collectorPollInterval time.Duration
	collectorBatchSize    int
	handoverDropTimeout   time.Duration
	collectorRepairAfter  time.Duration
	collectorSilence      time.Duration
	sharding              bool
	shardLeaseDuration    time.Duration
	metricsAPI            metricsadapter.Options
	targetSourcePush      pushendpoint.Options
}

func defaultOptions() options {
	return options{
		metricsAddr:           ":8443",
		metricsSecure:         true,
		metricsCertName:       "tls.crt",
		metricsCertKey:        "tls.key",
		probeAddr:             ":8081",
		leaderElect:           true,
		leaderElectionID:      "gnmic-operator.operator.gnmic.dev",
		leaseDuration:         15 * time.Second,
		renewDeadline:         10 * time.Second,
		retryPeriod:           2 * time.Second,
		kubeAPIQPS:            1000,
		kubeAPIBurst:          2000,
		maxConcurrentRecons:   4,
		gracefulShutdownTime:  30 * time.Second,
		collectorPollInterval: cluster.DefaultPollInterval,
		collectorBatchSize:    cluster.DefaultBatchSize,
		handoverDropTimeout:   cluster.DefaultDropTimeout,
		collectorRepairAfter:  cluster.DefaultRepairAfter,
		collectorSilence:      cluster.DefaultCollectorSilence,
		shardLeaseDuration:    15 * time.Second,
		metricsAPI:            metricsadapter.DefaultOptions(),
		targetSourcePush:      pushendpoint.DefaultOptions(),
	}
}

func (o *options) bindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", o.metricsAddr,
		"Address of the operator's Prometheus metrics endpoint, for example :8443 (HTTPS) or :8080 (HTTP). 0 disables it.")
	fs.BoolVar(&o.metricsSecure, "metrics-secure", o.metricsSecure,
		"Serve metrics over HTTPS, authenticating and authorizing every scrape through TokenReview and SubjectAccessReview.")
	fs.StringVar(&o.metricsCertPath, "metrics-cert-path", o.metricsCertPath,
		"Directory holding the metrics serving certificate. Empty: a self-signed certificate is generated at start.")
	fs.StringVar(&o.metricsCertName, "metrics-cert-name", o.metricsCertName, "File name of the metrics serving certificate.")
	fs.StringVar(&o.metricsCertKey, "metrics-cert-key", o.metricsCertKey, "File name of the metrics serving key.")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", o.probeAddr, "Address of the /healthz and /readyz probes.")
	fs.StringVar(&o.pprofAddr, "pprof-bind-address", o.pprofAddr,
		"Address of Go's profiling endpoints (/debug/pprof/), plain HTTP without authentication: for diagnosis only, "+
			"bound to localhost or reached by port-forward. Empty or 0 disables them.")
	fs.BoolVar(&o.enableHTTP2, "enable-http2", o.enableHTTP2,
		"Allow HTTP/2 on the metrics server. Off by default: HTTP/2 Rapid Reset and Stream Cancellation (CVE-2023-44487, CVE-2023-39325).")
	fs.BoolVar(&o.leaderElect, "leader-elect", o.leaderElect,
		"Elect a leader among operator replicas so that one reconciles at a time.")
	fs.StringVar(&o.leaderElectionID, "leader-election-id", o.leaderElectionID, "Name of the leader election Lease.")
	fs.StringVar(&o.leaderElectionNS, "leader-election-namespace", o.leaderElectionNS,
		"Namespace of the leader election Lease. Empty: the operator's own namespace.")
	fs.DurationVar(&o.leaseDuration, "leader-election-lease-duration", o.leaseDuration,
		"How long followers wait before taking over a lease that was not renewed.")
	fs.DurationVar(&o.renewDeadline, "leader-election-renew-deadline", o.renewDeadline,
		"How long the leader retries renewing before it gives up leadership.")
	fs.DurationVar(&o.retryPeriod, "leader-election-retry-period", o.retryPeriod, "Wait between leader election attempts.")
	fs.Float64Var(&o.kubeAPIQPS, "kube-api-qps", o.kubeAPIQPS, "Sustained queries per second to the Kubernetes API.")
	fs.IntVar(&o.kubeAPIBurst, "kube-api-burst", o.kubeAPIBurst, "Burst of queries to the Kubernetes API above kube-api-qps.")
	fs.StringVar(&o.watchNamespace, "watch-namespace", o.watchNamespace,
		"Watch only this namespace (comma-separated list allowed). Empty: every namespace.")
	fs.IntVar(&o.maxConcurrentRecons, "max-concurrent-reconciles", o.maxConcurrentRecons,
		"Clusters reconciled in parallel.")
	fs.DurationVar(&o.gracefulShutdownTime, "graceful-shutdown-timeout", o.gracefulShutdownTime,
		"How long the operator waits for running reconciles to finish when it stops, and at most for its metrics "+
			"API's drain (--metrics-api-drain-period) after them.")
	fs.DurationVar(&o.collectorPollInterval, "collector-poll-interval", o.collectorPollInterval,
		"How often each collector is asked for its targets' state when nothing else happens (a backstop).")
	fs.IntVar(&o.collectorBatchSize, "collector-batch-size", o.collectorBatchSize,
		"Most target changes a collector may have outstanding (sent, not yet acted on). gNMIc drops changes beyond "+
			"its 128-entry buffer without an error: keep it below 128.")
	fs.DurationVar(&o.handoverDropTimeout, "handover-drop-timeout", o.handoverDropTimeout,
		"How long a moved target waits for its old collector to drop it before it starts on its new pod anyway "+
			"(reported as a possible overlap).")
	fs.DurationVar(&o.collectorRepairAfter, "collector-repair-after", o.collectorRepairAfter,
		"How long a collector may act on none of its outstanding changes before they count as dropped and are sent again.")
	fs.DurationVar(&o.collectorSilence, "collector-unreachable-timeout", o.collectorSilence,
		"How long a collector whose pod looks ready may fail to answer before its pod counts as unavailable and "+
			"its grace period runs (from the first unanswered request).")
	fs.BoolVar(&o.sharding, "sharding", o.sharding,
		"Share the Clusters among every replica of the operator (docs/sharding.md) instead of electing one leader that "+
			"reconciles them all. Replaces --leader-elect.")
	fs.DurationVar(&o.shardLeaseDuration, "shard-lease-duration", o.shardLeaseDuration,
		"With --sharding: how long a replica's member Lease lasts without renewal; a replica that stops renewing "+
			"loses its Clusters after it. Renewed every third of it.")
	o.metricsAPI.BindFlags(fs)
	o.targetSourcePush.BindFlags(fs)
}

// validate refuses settings that would silently break collection.
func (o *options) validate() error {
	if o.collectorBatchSize < 1 || o.collectorBatchSize > 128 {
		return fmt.Errorf("--collector-batch-size=%d: must be between 1 and 128 (gNMIc drops target changes beyond "+
			"its 128-entry buffer)", o.collectorBatchSize)
	}
	if o.handoverDropTimeout <= 0 || o.collectorRepairAfter <= 0 || o.collectorSilence <= 0 {
		return fmt.Errorf("--handover-drop-timeout, --collector-repair-after and --collector-unreachable-timeout must be positive")
	}
	if drain := o.metricsAPI.DrainPeriod; drain < 0 || (o.gracefulShutdownTime >= 0 && drain > o.gracefulShutdownTime) {
		return fmt.Errorf("--metrics-api-drain-period=%s: must be between 0 and --graceful-shutdown-timeout (%s): the "+
			"operator does not wait longer for its metrics API to stop", drain, o.gracefulShutdownTime)
	}
	if o.sharding && o.shardLeaseDuration < 3*time.Second {
		return fmt.Errorf("--shard-lease-duration=%s: must be at least 3s (it is renewed every third of it)", o.shardLeaseDuration)
	}
	return nil
}
