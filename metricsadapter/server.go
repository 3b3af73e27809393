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

// metricsServer serves the metrics APIs over HTTPS with delegated authentication and authorization. It runs
// on every operator replica: the APIService's Service balances requests across all of them.
type metricsServer struct {
	opts       Options
	restConfig *rest.Config
	custom     provider.CustomMetricsProvider
	external   provider.ExternalMetricsProvider
	// certsReady is closed once CertDir holds the serving certificate.
	certsReady <-chan struct{}
}

// NeedLeaderElection is false: followers answer metrics requests too.
func (s *metricsServer) NeedLeaderElection() bool { return false }

// Start waits for the serving certificate, then serves until ctx ends.
func (s *metricsServer) Start(ctx context.Context) error {
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
	server, err := s.build(kubeconfig)
	if err != nil {
		return err
	}
	logger.Info("serving metrics APIs", "address", net.JoinHostPort(s.opts.BindAddress, fmt.Sprint(s.opts.Port)),
		"custom", s.custom != nil, "external", s.external != nil)
	if err := server.GenericAPIServer.PrepareRun().RunWithContext(ctx); err != nil {
		return fmt.Errorf("serve metrics APIs: %w", err)
	}
	return nil
}

// build configures the server the way custom-metrics-apiserver's AdapterBase does, but with the manager's
// connection instead of a kubeconfig flag and with the certificate files kept by this package.
func (s *metricsServer) build(authKubeconfig string) (*apiserver.CustomMetricsAdapterServer, error) {
	o := cmoptions.NewCustomMetricsAdapterServerOptions()
	o.SecureServing.BindAddress = net.ParseIP(s.opts.BindAddress)
	o.SecureServing.BindPort = s.opts.Port
	o.SecureServing.ServerCert.CertKey.CertFile = filepath.Join(s.opts.CertDir, certFileName)
	o.SecureServing.ServerCert.CertKey.KeyFile = filepath.Join(s.opts.CertDir, keyFileName)
	o.Authentication.RemoteKubeConfigFile = authKubeconfig
	o.Authorization.RemoteKubeConfigFile = authKubeconfig
	o.OpenAPIConfig, o.OpenAPIV3Config = openAPIConfigs(s.custom != nil, s.external != nil)
	if errs := o.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("metrics API server options: %v", errs)
	}

	clientset, err := kubernetes.NewForConfig(s.restConfig)
	if err != nil {
		return nil, fmt.Errorf("metrics API client: %w", err)
	}
	factory := informers.NewSharedInformerFactory(clientset, 0)
	config := genericapiserver.NewRecommendedConfig(apiserver.Codecs)
	config.ClientConfig = s.restConfig
	config.SharedInformerFactory = factory
	if err := o.ApplyTo(config); err != nil {
		return nil, fmt.Errorf("configure metrics API server: %w", err)
	}
	return newAdapterServer(config, factory, s.custom, s.external)
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
