package fakecollector

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"google.golang.org/grpc"
)

// Collector is a fake gNMIc collector. Create it with New, serve it with
// Start (or mount Handler), stop it with Close.
type Collector struct {
	startDelay time.Duration
	keepalive  time.Duration
	tlsConfig  *tls.Config
	// release is the gNMIc release the collector answers as (release.go), set once by New.
	release release
	handler http.Handler
	done    chan struct{}
	// queue is nil when target changes are acted on within the apply. It is
	// set once by New; what it holds is guarded by mu.
	queue *changeQueue

	// mu guards everything below. It is held for a whole apply, which
	// serialises applies as gNMIc does.
	mu          sync.Mutex
	closed      bool
	objects     map[string]map[string]map[string]any
	targets     map[string]*target
	metricNames map[string]bool
	counts      map[string]*TargetCounts
	applied     []AppliedConfig
	requests    []Request
	// applyCount counts every accepted apply; history, when positive, bounds applied and requests to
	// their last entries.
	applyCount   int
	history      int
	failNext     map[string]string
	devicesDown  map[string]string
	connOverride map[string]string
	blackholes   map[string]time.Duration
	applyFailure *applyFailure
	subscribers  map[*subscriber]struct{}
	server       *http.Server
	url          string
	// components are the runtime states of outputs and inputs, by kind and name; outputFailures the
	// settings an output fails to start with (FailOutputSetting).
	components     map[string]map[string]ComponentState
	outputFailures []settingFailure
	// processorFailures are the processor settings an output or input fails to start with
	// (FailProcessorSetting).
	processorFailures []settingFailure
	// tunnelDevices are the devices registered with the tunnel server, ID to type; tunnelServer serves it
	// (ServeTunnel, tunnel.go).
	tunnelDevices map[string]string
	tunnelServer  *grpc.Server
	// load is the targets' traffic and the pod's CPU (load.go).
	load *loadModel
}

// Option configures a Collector.
type Option func(*Collector)

// DefaultKeepalive is how often gNMIc writes ": keepalive" on event streams.
const DefaultKeepalive = 15 * time.Second

// WithStartDelay keeps started targets in state starting (connection
// CONNECTING, subscriptions stopped) for d before they collect. By default
// targets collect as soon as they are applied.
func WithStartDelay(d time.Duration) Option {
	return func(c *Collector) { c.startDelay = d }
}

// WithHistory keeps only the last n applies and requests (Applied, Requests): a collector that runs for
// hours would otherwise keep every configuration it was sent. ApplyCount still counts all of them.
func WithHistory(n int) Option {
	return func(c *Collector) { c.history = n }
}

// lastOf trims a history to its last n entries (all of them when n is not positive).
func lastOf[T any](s []T, n int) []T {
	if n <= 0 || len(s) <= n {
		return s
	}
	return append(s[:0:0], s[len(s)-n:]...)
}

// WithKeepalive sets the interval of ": keepalive" comments on event streams.
func WithKeepalive(d time.Duration) Option {
	return func(c *Collector) { c.keepalive = d }
}

// WithTLS serves HTTPS with cfg (which must hold the server certificate);
// set cfg.ClientCAs and cfg.ClientAuth to require client certificates, as
// gNMIc does when api-server.tls.ca-file is set.
func WithTLS(cfg *tls.Config) Option {
	return func(c *Collector) { c.tlsConfig = cfg }
}

// New returns a collector with an empty configuration.
func New(opts ...Option) *Collector {
	c := &Collector{
		keepalive:     DefaultKeepalive,
		release:       mustParseRelease(NewestRelease),
		done:          make(chan struct{}),
		objects:       make(map[string]map[string]map[string]any),
		targets:       make(map[string]*target),
		metricNames:   make(map[string]bool),
		counts:        make(map[string]*TargetCounts),
		failNext:      make(map[string]string),
		devicesDown:   make(map[string]string),
		connOverride:  make(map[string]string),
		blackholes:    make(map[string]time.Duration),
		subscribers:   make(map[*subscriber]struct{}),
		components:    make(map[string]map[string]ComponentState),
		tunnelDevices: make(map[string]string),
		load:          newLoadModel(),
	}
	for _, opt := range opts {
		opt(c)
	}
	c.handler = c.routes()
	if c.queue != nil {
		c.queue.init(&c.mu)
		go c.work()
	}
	return c
}

// Handler serves the collector's API in-process, for example with
// httptest.NewServer. Close still ends its event streams.
func (c *Collector) Handler() http.Handler { return c.handler }

// Start listens on addr ("127.0.0.1:0", or a pod IP and port such as
// "127.1.0.5:7890") and serves in the background until Close.
func (c *Collector) Start(addr string) error {
	listener, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("fake collector listen on %s: %w", addr, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.server != nil {
		_ = listener.Close()
		return errors.New("fake collector already started or closed")
	}
	c.server = &http.Server{Handler: c.handler, ReadHeaderTimeout: 10 * time.Second}
	scheme := "http"
	if c.tlsConfig != nil {
		scheme = "https"
		c.server.TLSConfig = c.tlsConfig
	}
	c.url = scheme + "://" + listener.Addr().String()
	go c.serve(c.server, listener)
	return nil
}

func (c *Collector) serve(server *http.Server, listener net.Listener) {
	if server.TLSConfig != nil {
		_ = server.ServeTLS(listener, "", "")
		return
	}
	_ = server.Serve(listener)
}

// URL is the collector's base URL once started, such as
// "http://127.0.0.1:41234".
func (c *Collector) URL() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.url
}

// Close stops serving, ends event streams, pending target starts and the
// change queue's worker. It is idempotent.
func (c *Collector) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	close(c.done)
	if c.queue != nil {
		c.queue.wake.Broadcast()
	}
	for _, t := range c.targets {
		t.cancelPending()
	}
	server, tunnelServer := c.server, c.tunnelServer
	c.mu.Unlock()
	if tunnelServer != nil {
		tunnelServer.Stop()
	}
	if server != nil {
		return server.Close()
	}
	return nil
}

// TestingT is the part of testing.TB (and of Ginkgo's GinkgoT()) that
// StartForTest uses.
type TestingT interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// StartForTest starts a collector on a free loopback port and closes it when
// the test ends.
func StartForTest(t TestingT, opts ...Option) *Collector {
	t.Helper()
	c := New(opts...)
	if err := c.Start("127.0.0.1:0"); err != nil {
		t.Fatalf("start fake collector: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}
