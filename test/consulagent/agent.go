// Package consulagent runs a real Consul agent for tests: `consul agent -dev` (one server, its catalog in
// memory) on free loopback ports, with ACLs (default deny) and an HTTPS port that asks for a client
// certificate. The binary is the one hack/consul.sh builds; tests find it through the CONSUL variable that
// `make test-consul` sets, and skip without it.
package consulagent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	consul "github.com/hashicorp/consul/api"

	"github.com/gnmic-operator/gnmic-operator/internal/pki"
)

// BinaryEnv names the environment variable holding the path of the consul binary.
const BinaryEnv = "CONSUL"

// Binary is the consul binary the tests run, from $CONSUL; false when it is not set.
func Binary() (string, bool) {
	path := os.Getenv(BinaryEnv)
	return path, path != ""
}

// ManagementToken is the agent's initial management token: every right.
const ManagementToken = "3b1a2f9e-6d0c-4b7e-9a51-000000000001"

// Agent is a running dev agent.
type Agent struct {
	// HTTPAddress is the plain HTTP API, host:port.
	HTTPAddress string
	// HTTPSAddress is the HTTPS API, host:port; it verifies client certificates against CA.
	HTTPSAddress string
	// CA signed the agent's serving certificate (for 127.0.0.1) and Client.
	CA pki.KeyPair
	// Client is a client certificate the HTTPS API accepts.
	Client pki.KeyPair

	cmd     *exec.Cmd
	log     *lockedBuffer
	stopped chan struct{}
}

// Start runs a dev agent from binary, its files in dir, and waits until it has a leader and its ACLs answer.
func Start(ctx context.Context, binary, dir string) (*Agent, error) {
	ports, err := freePorts(6)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	ca, err := pki.NewCA("consul-test-ca", now, time.Hour)
	if err != nil {
		return nil, err
	}
	server, err := pki.NewServer(ca, "server.dc1.consul", []string{"server.dc1.consul", "localhost"}, []net.IP{net.IPv4(127, 0, 0, 1)}, now, time.Hour)
	if err != nil {
		return nil, err
	}
	client, err := pki.NewClient(ca, "consul-test-client", now, time.Hour)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{"ca.pem": ca.CertPEM, "server.pem": server.CertPEM, "server-key.pem": server.KeyPEM}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return nil, err
		}
	}
	config := fmt.Sprintf(`
node_name   = "consul-test"
bind_addr   = "127.0.0.1"
client_addr = "127.0.0.1"
log_level   = "warn"
ports {
  http     = %d
  https    = %d
  serf_lan = %d
  serf_wan = %d
  server   = %d
  dns      = -1
  grpc     = -1
  grpc_tls = -1
}
acl {
  enabled        = true
  default_policy = "deny"
  tokens {
    initial_management = %q
    agent              = %q
  }
}
tls {
  defaults {
    ca_file   = %q
    cert_file = %q
    key_file  = %q
  }
  https {
    verify_incoming = true
  }
}
`, ports[0], ports[1], ports[2], ports[3], ports[4], ManagementToken, ManagementToken,
		filepath.Join(dir, "ca.pem"), filepath.Join(dir, "server.pem"), filepath.Join(dir, "server-key.pem"))
	configFile := filepath.Join(dir, "agent.hcl")
	if err := os.WriteFile(configFile, []byte(config), 0o600); err != nil {
		return nil, err
	}

	a := &Agent{
		HTTPAddress:  net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0])),
		HTTPSAddress: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1])),
		CA:           ca,
		Client:       client,
		log:          &lockedBuffer{},
		stopped:      make(chan struct{}),
	}
	a.cmd = exec.Command(binary, "agent", "-dev", "-config-file", configFile) //nolint:gosec // the test's own binary
	a.cmd.Stdout, a.cmd.Stderr = a.log, a.log
	if err := a.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start consul: %w", err)
	}
	go func() { _ = a.cmd.Wait(); close(a.stopped) }()
	if err := a.waitReady(ctx); err != nil {
		a.Stop()
		return nil, fmt.Errorf("%w; consul's log:\n%s", err, a.log.String())
	}
	return a, nil
}

// waitReady waits until the agent has elected itself leader and its ACL system accepts the management token.
func (a *Agent) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	c := a.ManagementClient()
	for {
		_, _, err := c.ACL().TokenReadSelf((&consul.QueryOptions{}).WithContext(ctx))
		if err == nil {
			leader, lerr := c.Status().LeaderWithQueryOptions((&consul.QueryOptions{}).WithContext(ctx))
			if lerr == nil && leader != "" {
				return nil
			}
			err = errors.Join(err, lerr, errors.New("no leader yet"))
		}
		select {
		case <-a.stopped:
			return fmt.Errorf("consul exited: %v", a.cmd.ProcessState)
		case <-ctx.Done():
			return fmt.Errorf("consul not ready: %w", err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// ManagementClient is a client of the HTTP API with the management token.
func (a *Agent) ManagementClient() *consul.Client {
	c, err := consul.NewClient(&consul.Config{
		Address:    a.HTTPAddress,
		Scheme:     "http",
		Token:      ManagementToken,
		HttpClient: &http.Client{Timeout: 10 * time.Second},
	})
	if err != nil {
		panic(err) // only an invalid address fails, and this one is ours
	}
	return c
}

// CreateToken creates an ACL token whose one policy has these rules, and returns its secret. It talks to the
// HTTP API itself: the client library's token type has fields that Consul 1.16 refuses.
func (a *Agent) CreateToken(ctx context.Context, name, rules string) (string, error) {
	var policy struct{ ID string }
	if err := a.put(ctx, "/v1/acl/policy", map[string]any{"Name": name, "Rules": rules}, &policy); err != nil {
		return "", fmt.Errorf("create policy %s: %w", name, err)
	}
	var token struct{ SecretID string }
	if err := a.put(ctx, "/v1/acl/token", map[string]any{"Policies": []map[string]string{{"ID": policy.ID}}}, &token); err != nil {
		return "", fmt.Errorf("create token of policy %s: %w", name, err)
	}
	return token.SecretID, nil
}

func (a *Agent) put(ctx context.Context, path string, body, out any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, "http://"+a.HTTPAddress+path, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("X-Consul-Token", ManagementToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(answer))
	}
	return json.Unmarshal(answer, out)
}

// Log is what the agent printed.
func (a *Agent) Log() string { return a.log.String() }

// Stop kills the agent (its catalog is in memory) and waits for it to exit.
func (a *Agent) Stop() {
	if a.cmd.Process != nil {
		_ = a.cmd.Process.Kill()
	}
	<-a.stopped
}

// freePorts are n TCP ports free on 127.0.0.1 a moment ago.
func freePorts(n int) ([]int, error) {
	var ports []int
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
