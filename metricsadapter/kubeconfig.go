package metricsadapter

import (
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// authKubeconfig returns the kubeconfig file the delegated authenticator and authorizer connect with: the
// one the user gave, none inside a pod (the library then uses the pod's ServiceAccount), else the manager's
// own connection written to dir. The server libraries accept only a file or the in-cluster configuration.
func authKubeconfig(opts Options, cfg *rest.Config) (string, error) {
	if opts.AuthKubeconfig != "" {
		return opts.AuthKubeconfig, nil
	}
	if _, err := rest.InClusterConfig(); err == nil {
		return "", nil
	}
	path := filepath.Join(opts.CertDir, "auth.kubeconfig")
	if err := writeKubeconfig(cfg, path); err != nil {
		return "", err
	}
	return path, nil
}

// writeKubeconfig writes the connection of cfg as a kubeconfig file readable by its owner only.
func writeKubeconfig(cfg *rest.Config, path string) error {
	cluster := clientcmdapi.NewCluster()
	cluster.Server = cfg.Host
	cluster.CertificateAuthority = cfg.CAFile
	cluster.CertificateAuthorityData = cfg.CAData
	cluster.InsecureSkipTLSVerify = cfg.Insecure
	cluster.TLSServerName = cfg.ServerName

	user := clientcmdapi.NewAuthInfo()
	user.ClientCertificate = cfg.CertFile
	user.ClientCertificateData = cfg.CertData
	user.ClientKey = cfg.KeyFile
	user.ClientKeyData = cfg.KeyData
	user.Token = cfg.BearerToken
	user.TokenFile = cfg.BearerTokenFile
	user.Username = cfg.Username
	user.Password = cfg.Password
	user.Exec = cfg.ExecProvider
	user.AuthProvider = cfg.AuthProvider

	kubeconfig := clientcmdapi.NewConfig()
	kubeconfig.Clusters["operator"] = cluster
	kubeconfig.AuthInfos["operator"] = user
	kubeconfig.Contexts["operator"] = &clientcmdapi.Context{Cluster: "operator", AuthInfo: "operator"}
	kubeconfig.CurrentContext = "operator"

	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create directory of %s: %w", path, err)
	}
	content, err := clientcmd.Write(*kubeconfig)
	if err != nil {
		return fmt.Errorf("encode kubeconfig: %w", err)
	}
	if err := os.WriteFile(path, content, 0o600); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return nil
}
