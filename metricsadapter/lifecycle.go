package metricsadapter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/client-go/rest"
)

// selfCheckTimeout bounds one readiness check's request to the server's own /readyz; a kubelet gives the
// whole probe one second by default.
const selfCheckTimeout = 900 * time.Millisecond

// lifecycle is what the rest of the operator knows of the metrics API server:
//
//   - not started: the server waits for its certificate or is being built; not ready;
//   - serving: it runs; ready while it answers its own /readyz through its listener (a connection the way
//     any client makes one, so ready means the port accepts and the server serves, its start-up hooks done);
//   - draining: the manager stopped it; not ready at once (and the server's own /readyz fails too), while
//     it serves every request for DrainPeriod, so that the replica's endpoint leaves the Service before the
//     port closes;
//   - stopped: the port is closed; Wait returns.
//
// The manager's readiness check is Ready; main calls Wait once the manager has stopped.
type lifecycle struct {
	mu sync.Mutex
	// self asks the running server's /readyz; nil until the server runs.
	self func(context.Context) error
	// stopped is closed once the running server closed its port; nil until it runs.
	stopped  chan struct{}
	draining bool
	// waited: Wait was called; the server must not start after it.
	waited bool
}

// launched records that the server runs, unless Wait was already called (then it must not run: false).
func (l *lifecycle) launched(self func(context.Context) error, stopped chan struct{}) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.waited {
		return false
	}
	l.self, l.stopped = self, stopped
	return true
}

// drain records that the drain began: the server is no longer ready.
func (l *lifecycle) drain() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.draining = true
}

// Ready is the metrics API's readiness check (a healthz.Checker): it passes while the server runs, is not
// draining and answers its own /readyz through its listener.
func (l *lifecycle) Ready(req *http.Request) error {
	l.mu.Lock()
	self, draining := l.self, l.draining
	l.mu.Unlock()
	switch {
	case draining:
		return errors.New("the metrics API is draining: the operator is stopping")
	case self == nil:
		return errors.New("the metrics API does not serve yet")
	}
	return self(req.Context())
}

// Wait returns once the server has closed its port after its drain, at once if it never started (it then
// never will) or is nil (both APIs switched off), or when ctx ends. Call it after the manager has stopped:
// the manager no longer waits for the server once its drain began.
func (s *Server) Wait(ctx context.Context) error {
	if s == nil {
		return nil
	}
	return s.wait(ctx)
}

func (l *lifecycle) wait(ctx context.Context) error {
	l.mu.Lock()
	l.waited = true
	stopped := l.stopped
	l.mu.Unlock()
	if stopped == nil {
		return nil
	}
	select {
	case <-stopped:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("the metrics API server did not stop: %w", context.Cause(ctx))
	}
}

// selfCheck is the readiness of a running server: it knows the CA of kube-apiserver's front proxy, and it
// answers its own /readyz over its loopback connection (its own listener, with the loopback certificate and
// token the generic server made for itself), as any client reaches it.
func selfCheck(loopback *rest.Config, frontProxy *authenticatorfactory.RequestHeaderConfig) (func(context.Context) error, error) {
	client, err := rest.HTTPClientFor(loopback)
	if err != nil {
		return nil, fmt.Errorf("metrics API loopback client: %w", err)
	}
	url := strings.TrimSuffix(loopback.Host, "/") + "/readyz"
	return func(ctx context.Context) error {
		if err := frontProxyKnown(frontProxy); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, selfCheckTimeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("metrics API /readyz: %w", err)
		}
		resp, err := client.Do(req)
		if err != nil {
			return fmt.Errorf("metrics API /readyz: %w", err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<10))
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("metrics API /readyz answered %d: %s", resp.StatusCode, failedChecks(string(body)))
		}
		return nil
	}, nil
}

// frontProxyKnown fails until the server can verify the client certificate kube-apiserver's aggregation
// layer presents. Its CA comes from kube-system/extension-apiserver-authentication through an informer that
// starts with the server, tens of milliseconds after the port serves (the generic server's /readyz does not
// wait for it): until then every request the aggregation layer forwards counts as anonymous and is
// forbidden. A kube-apiserver that publishes no front proxy (no request header names) leaves nothing to
// wait for.
func frontProxyKnown(frontProxy *authenticatorfactory.RequestHeaderConfig) error {
	if frontProxy == nil || frontProxy.UsernameHeaders == nil || len(frontProxy.UsernameHeaders.Value()) == 0 {
		return nil
	}
	if _, ok := frontProxy.CAContentProvider.VerifyOptions(); !ok {
		return errors.New("the metrics API does not know kube-apiserver's front-proxy CA yet " +
			"(requestheader-client-ca-file of kube-system/extension-apiserver-authentication)")
	}
	return nil
}

// failedChecks are the lines of a verbose /readyz answer that name a failed check ("[-]shutdown failed: …"),
// else the whole answer.
func failedChecks(body string) string {
	var failed []string
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "[-]") {
			failed = append(failed, strings.TrimPrefix(line, "[-]"))
		}
	}
	if len(failed) == 0 {
		return strings.TrimSpace(body)
	}
	return strings.Join(failed, "; ")
}
