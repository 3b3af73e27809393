package metricsadapter

import (
	"context"
	"fmt"
	"net"
	"path/filepath"

	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	openapicommon "k8s.io/kube-openapi/pkg/common"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/apiserver"
	cmoptions "sigs.k8s.io/custom-metrics-apiserver/pkg/cmd/options"
	generatedcore "sigs.k8s.io/custom-metrics-apiserver/pkg/generated/openapi/core"
	generatedcustommetrics "sigs.k8s.io/custom-metrics-apiserver/pkg/generated/openapi/custommetrics"
	generatedexternalmetrics "sigs.k8s.io/custom-metrics-apiserver/pkg/generated/openapi/externalmetrics"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
)

const serverName = "gnmic-operator-metrics-api"

// Server serves the metrics APIs over HTTPS with delegated authentication and authorization. It runs on
// every operator replica: the APIService's Service balances requests across all of them. Setup adds it to
// the manager; its lifecycle is in lifecycle.go (readiness, the drain on shutdown, Wait).
type Server struct {
	opts       Options
	restConfig *rest.Config
	custom     provider.CustomMetricsProvider
	external   provider.ExternalMetricsProvider
	// certsReady is closed once CertDir holds the serving certificate.
	certsReady <-chan struct{}

	lifecycle
}

// NeedLeaderElection is false: followers answer metrics requests too.
func (s *Server) NeedLeaderElection() bool { return false }

// Start waits for the serving certificate, then serves until ctx ends. Then it drains: it returns at once,
// so that the manager stops everything else meanwhile, while the server reports not ready and keeps serving
// for DrainPeriod before it closes its port (Wait tells when it has).
func (s *Server) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("metrics-api")
	select {
	case <-s.certsReady:
	case <-ctx.Done():
		return nil
	}
	kubeconfig, err := authKubeconfig(s.opts, s.restConfig)
	if err != nil {
		return fmt.Errorf("metrics API delegated authentication: %w", err)
	}
	server, config, err := s.build(kubeconfig)
	if err != nil {
		return err
	}
	self, err := selfCheck(config.LoopbackClientConfig, config.Authentication.RequestHeaderConfig)
	if err != nil {
		return err
	}
	prepared := server.GenericAPIServer.PrepareRun()

	// The server's own context keeps the manager's values but not its end: the generic server answers its
	// /readyz with a failure as soon as serveCtx ends, serves every other request for ShutdownDelayDuration
	// (the drain), and only then closes its port.
	serveCtx, stopServing := context.WithCancel(context.WithoutCancel(ctx))
	defer stopServing()
	stopped := make(chan struct{})
	if ctx.Err() != nil || !s.launched(self, stopped) {
		return nil // the operator stopped while the server was being built: it never served, nothing to drain
	}
	var serveErr error
	go func() {
		defer close(stopped)
		serveErr = prepared.RunWithContext(serveCtx)
	}()
	logger.Info("serving metrics APIs", "address", net.JoinHostPort(s.opts.BindAddress, fmt.Sprint(s.opts.Port)),
		"custom", s.custom != nil, "external", s.external != nil, "drainPeriod", s.opts.DrainPeriod)

	select {
	case <-stopped:
		if serveErr != nil {
			return fmt.Errorf("serve metrics APIs: %w", serveErr)
		}
		return fmt.Errorf("the metrics API server stopped by itself")
	case <-ctx.Done():
	}
	s.drain()
	logger.Info("draining: not ready, serving until the drain ends", "drainPeriod", s.opts.DrainPeriod)
	stopServing()
	go func() {
		<-stopped
		if serveErr != nil {
			logger.Error(serveErr, "metrics API server stopped")
			return
		}
		logger.Info("metrics API server stopped")
	}()
	return nil
}

// build configures the server the way custom-metrics-apiserver's AdapterBase does, but with the manager's
// connection instead of a kubeconfig flag, with the certificate files kept by this package and with the
// drain as its shutdown delay. It also returns the server's configuration, whose loopback connection
// reaches the server through its own listener.
func (s *Server) build(authKubeconfig string) (*apiserver.CustomMetricsAdapterServer, *genericapiserver.RecommendedConfig, error) {
	o := cmoptions.NewCustomMetricsAdapterServerOptions()
	o.SecureServing.BindAddress = net.ParseIP(s.opts.BindAddress)
	o.SecureServing.BindPort = s.opts.Port
	o.SecureServing.ServerCert.CertKey.CertFile = filepath.Join(s.opts.CertDir, certFileName)
	o.SecureServing.ServerCert.CertKey.KeyFile = filepath.Join(s.opts.CertDir, keyFileName)
	o.Authentication.RemoteKubeConfigFile = authKubeconfig
	o.Authorization.RemoteKubeConfigFile = authKubeconfig
	o.OpenAPIConfig, o.OpenAPIV3Config = openAPIConfigs(s.custom != nil, s.external != nil)
	if errs := o.Validate(); len(errs) > 0 {
		return nil, nil, fmt.Errorf("metrics API server options: %v", errs)
	}

	clientset, err := kubernetes.NewForConfig(s.restConfig)
	if err != nil {
		return nil, nil, fmt.Errorf("metrics API client: %w", err)
	}
	factory := informers.NewSharedInformerFactory(clientset, 0)
	config := genericapiserver.NewRecommendedConfig(apiserver.Codecs)
	config.ClientConfig = s.restConfig
	config.SharedInformerFactory = factory
	if err := o.ApplyTo(config); err != nil {
		return nil, nil, fmt.Errorf("configure metrics API server: %w", err)
	}
	config.ShutdownDelayDuration = s.opts.DrainPeriod
	server, err := newAdapterServer(config, factory, s.custom, s.external)
	if err != nil {
		return nil, nil, err
	}
	return server, config, nil
}

// newAdapterServer installs the providers on a configured generic server. A nil provider switches its API off.
func newAdapterServer(config *genericapiserver.RecommendedConfig, factory informers.SharedInformerFactory, custom provider.CustomMetricsProvider, external provider.ExternalMetricsProvider) (*apiserver.CustomMetricsAdapterServer, error) {
	adapterConfig := &apiserver.Config{GenericConfig: &config.Config}
	server, err := adapterConfig.Complete(factory).New(serverName, custom, external)
	if err != nil {
		return nil, fmt.Errorf("create metrics API server: %w", err)
	}
	return server, nil
}

// openAPIConfigs describe the served types so that kube-apiserver can publish the aggregated OpenAPI.
func openAPIConfigs(custom, external bool) (*openapicommon.Config, *openapicommon.OpenAPIV3Config) {
	getters := []openapicommon.GetOpenAPIDefinitions{generatedcore.GetOpenAPIDefinitions}
	if custom {
		getters = append(getters, generatedcustommetrics.GetOpenAPIDefinitions)
	}
	if external {
		getters = append(getters, generatedexternalmetrics.GetOpenAPIDefinitions)
	}
	definitions := func(ref openapicommon.ReferenceCallback) map[string]openapicommon.OpenAPIDefinition {
		all := map[string]openapicommon.OpenAPIDefinition{}
		for _, get := range getters {
			for name, definition := range get(ref) {
				all[name] = definition
			}
		}
		return all
	}
	namer := openapinamer.NewDefinitionNamer(apiserver.Scheme)
	v2 := genericapiserver.DefaultOpenAPIConfig(definitions, namer)
	v2.Info.Title, v2.Info.Version = serverName, "v1alpha1"
	v3 := genericapiserver.DefaultOpenAPIV3Config(definitions, namer)
	v3.Info.Title, v3.Info.Version = serverName, "v1alpha1"
	return v2, v3
}
