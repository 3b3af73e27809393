package pushendpoint

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"
)

// shutdownTimeout bounds how long posts in flight may finish once the operator stops.
const shutdownTimeout = 10 * time.Second

// maxConcurrentPosts bounds the posts whose bodies a replica reads and handles at once (handler.slots).
const maxConcurrentPosts = 2

// Server serves the push endpoint over HTTPS on every replica; the Service in front of the operator's pods
// spreads posts over them.
type Server struct {
	address string
	handler http.Handler
	cert    *servingCertificate
	// drain is how long it keeps serving, not ready, once the operator stops.
	drain   time.Duration
	serving atomic.Bool
}

// NeedLeaderElection is false: followers receive posts too.
func (s *Server) NeedLeaderElection() bool { return false }

// Ready answers the manager's readiness check: ready once the endpoint serves.
func (s *Server) Ready(*http.Request) error {
	if !s.serving.Load() {
		return errors.New("the TargetSource push endpoint does not serve yet (waiting for its certificate)")
	}
	return nil
}

// Start waits for the certificate, then serves until ctx ends and lets posts in flight finish.
func (s *Server) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("targetsource-push")
	select {
	case <-s.cert.Ready():
	case <-ctx.Done():
		return nil
	}
	listener, err := net.Listen("tcp", s.address)
	if err != nil {
		return fmt.Errorf("listen on %s for the TargetSource push endpoint: %w", s.address, err)
	}
	server := &http.Server{
		Handler: s.handler,
		TLSConfig: &tls.Config{
			MinVersion:     tls.VersionTLS12,
			GetCertificate: s.cert.GetCertificate,
			NextProtos:     []string{"http/1.1"}, // no HTTP/2: its Rapid Reset (CVE-2023-44487), as the metrics server
		},
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return log.IntoContext(context.WithoutCancel(ctx), logger) },
	}
	errs := make(chan error, 1)
	go func() { errs <- server.ServeTLS(listener, "", "") }()
	s.serving.Store(true)
	logger.Info("serving the TargetSource push endpoint", "address", listener.Addr().String())
	select {
	case err := <-errs:
		s.serving.Store(false)
		return fmt.Errorf("serve the TargetSource push endpoint: %w", err)
	case <-ctx.Done():
	}
	// Not ready first, and still serving for the drain: the replica leaves the Service's endpoints before its
	// port closes, so that no post is routed to a closed port.
	s.serving.Store(false)
	if s.drain > 0 {
		logger.Info("draining: not ready, serving until the drain ends", "drainPeriod", s.drain)
		time.Sleep(s.drain)
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := server.Shutdown(shutdownCtx); err != nil {
		logger.Error(err, "posts in flight cut short by the shutdown")
	}
	return nil
}
