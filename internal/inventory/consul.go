package inventory

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	consul "github.com/hashicorp/consul/api"
)

// ConsulOptions configure a Consul inventory. The controller fills them from a TargetSource's spec.consul and
// its Secrets.
type ConsulOptions struct {
	// Address of Consul's HTTP API: host:port, or an http:// or https:// URL.
	Address string
	// Datacenter to read; empty: the agent's.
	Datacenter string
	// Services whose instances are the records, read in this order.
	Services []string
	// Tags an instance must all carry.
	Tags []string
	// Filter is a Consul filter expression, applied by Consul.
	Filter string
	// NodeMetaLabels are the node metadata keys copied into each record's labels.
	NodeMetaLabels []string
	// Token is the ACL token sent with every request; empty sends none.
	Token string

	// CABundle (PEM) verifies Consul's certificate instead of the system's CAs.
	CABundle []byte
	// ServerName overrides the name verified in the certificate.
	ServerName string
	// InsecureSkipVerify accepts any certificate.
	InsecureSkipVerify bool
	// ClientCert and ClientKey (PEM), when set, are presented to Consul.
	ClientCert, ClientKey []byte

	// Timeout of one whole fetch (0: 30s).
	Timeout time.Duration
	// Budget bounds the records and bytes of one fetch, every service's answer together.
	Budget Budget
}

// Consul is an inventory in Consul's service catalog: each instance of each service is a record. It remembers
// the catalog index of each service at the last fetch; when none has moved the snapshot is Unchanged (Consul
// moves a service's index when an instance, or a node it runs on, changes).
type Consul struct {
	opts   ConsulOptions
	client *consul.Client
	// indexes of the services at the last successful fetch, in the order of opts.Services.
	indexes []uint64
}

// NewConsul checks the options and builds the client. The client reads nothing from the operator's
// environment (CONSUL_HTTP_TOKEN and the like): every request carries this inventory's token and nothing else.
func NewConsul(o ConsulOptions) (*Consul, error) {
	scheme, host, err := consulAddress(o.Address)
	if err != nil {
		return nil, err
	}
	if len(o.Services) == 0 {
		return nil, errors.New("consul: no service to read")
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: o.ServerName, InsecureSkipVerify: o.InsecureSkipVerify} //nolint:gosec // off unless the user asks
	if len(o.CABundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(o.CABundle) {
			return nil, errors.New("consul: the CA bundle holds no PEM certificate")
		}
		tlsConfig.RootCAs = pool
	}
	if len(o.ClientCert) > 0 || len(o.ClientKey) > 0 {
		cert, err := tls.X509KeyPair(o.ClientCert, o.ClientKey)
		if err != nil {
			return nil, fmt.Errorf("consul: the client certificate: %w", err)
		}
		tlsConfig.Certificates = []tls.Certificate{cert}
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = tlsConfig
	httpClient := &http.Client{
		Transport: onlyOwnToken{token: o.Token, next: budgeted{next: t}},
		// Consul's API does not redirect; a redirect would take the token along.
		CheckRedirect: func(req *http.Request, _ []*http.Request) error {
			return fmt.Errorf("consul redirects to %s: redirects are not followed", req.URL.Redacted())
		},
	}
	client, err := consul.NewClient(&consul.Config{
		Address:    host,
		Scheme:     scheme,
		Datacenter: o.Datacenter,
		Token:      o.Token,
		HttpClient: httpClient,
	})
	if err != nil {
		return nil, fmt.Errorf("consul: %w", err)
	}
	return &Consul{opts: o, client: client}, nil
}

// consulAddress splits an address, host:port or an http:// or https:// URL without a path, into its scheme
// and host:port.
func consulAddress(address string) (scheme, host string, err error) {
	scheme, host = "http", address
	if s, rest, ok := strings.Cut(address, "://"); ok {
		scheme, host = s, strings.TrimSuffix(rest, "/")
	}
	if (scheme != "http" && scheme != "https") || host == "" || strings.ContainsAny(host, "/?#@ ") {
		return "", "", fmt.Errorf("consul address %q is not host:port or an http:// or https:// URL without a path", address)
	}
	return scheme, host, nil
}

// onlyOwnToken sends the inventory's token (or none) and drops the namespace and partition that the client
// library would take from the operator's environment.
type onlyOwnToken struct {
	token string
	next  http.RoundTripper
}

func (o onlyOwnToken) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Del("Authorization")
	req.Header.Del("X-Consul-Token")
	if o.token != "" {
		req.Header.Set("X-Consul-Token", o.token)
	}
	q := req.URL.Query()
	if q.Has("ns") || q.Has("partition") {
		q.Del("ns")
		q.Del("partition")
		req.URL.RawQuery = q.Encode()
	}
	return o.next.RoundTrip(req)
}

// budgetKey carries a fetch's budget in its requests' context, for budgeted.
type budgetKey struct{}

// budgeted counts the body of every answer, its bytes (after the transport decompressed it) and the objects of
// its list (the instances), against the budget of the fetch that asked: the client library decodes a whole
// answer at once, and must not be handed more than the budget.
type budgeted struct{ next http.RoundTripper }

func (b budgeted) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := b.next.RoundTrip(req)
	budget, ok := req.Context().Value(budgetKey{}).(*syncBudget)
	if err != nil || !ok {
		return resp, err
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{&listCounter{r: &budgetReader{r: resp.Body, pageMax: budget.limits.MaxBytes, pageBudget: "sync.maxBytes", sync: budget}, sync: budget}, resp.Body}
	return resp, nil
}

// listCounter counts the objects of the JSON list it reads as they pass, against the sync's records.
type listCounter struct {
	r    io.Reader
	sync *syncBudget
	// The scanner's state: nesting depth, in a string, after a backslash in one.
	depth            int
	inString, escape bool
}

func (l *listCounter) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for _, c := range p[:n] {
		switch {
		case l.escape:
			l.escape = false
		case l.inString && c == '\\':
			l.escape = true
		case l.inString:
			l.inString = c != '"'
		case c == '"':
			l.inString = true
		case c == '{' || c == '[':
			l.depth++
			if l.depth == 2 && c == '{' {
				if rerr := l.sync.record(); rerr != nil {
					return 0, rerr
				}
			}
		case c == '}' || c == ']':
			l.depth--
		}
	}
	return n, err
}

// Fetch reads every service's instances. A service that fails, or whose answer Consul cut short for the
// token's lack of rights, or that goes over the budget, fails the whole fetch: a partial inventory is never
// returned. A service with no instance (or that does not exist) gives no record.
func (c *Consul) Fetch(ctx context.Context) (Snapshot, error) {
	fetchCtx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	budget := newSyncBudget(c.opts.Budget)
	snap, err := c.fetch(context.WithValue(fetchCtx, budgetKey{}, budget))
	if budget.exceeded != nil && !errors.Is(err, budget.exceeded) {
		err = fmt.Errorf("%w: %w", budget.exceeded, err)
	}
	return snap, overTime(ctx, fetchCtx, err, c.opts.Timeout, "timeout")
}

func (c *Consul) fetch(ctx context.Context) (Snapshot, error) {
	var records []Record
	indexes := make([]uint64, len(c.opts.Services))
	for i, service := range c.opts.Services {
		q := (&consul.QueryOptions{Datacenter: c.opts.Datacenter, Filter: c.opts.Filter}).WithContext(ctx)
		instances, meta, err := c.client.Catalog().ServiceMultipleTags(service, c.opts.Tags, q)
		if err != nil {
			return Snapshot{}, fmt.Errorf("consul: read the instances of service %s: %w", service, err)
		}
		if meta.ResultsFilteredByACLs {
			// Consul answers a token that may not read some instances with the others, as if the rest did not
			// exist: taken as the inventory, that answer would delete their Targets.
			return Snapshot{}, fmt.Errorf("consul: the token may not read every instance of service %s (Consul left some out): "+
				"it needs service:read on the service and node:read on its nodes", service)
		}
		indexes[i] = meta.LastIndex
		for _, inst := range instances {
			records = append(records, consulRecord(inst, c.opts.NodeMetaLabels))
		}
	}
	unchanged := slices.Equal(indexes, c.indexes) && !slices.Contains(indexes, 0)
	c.indexes = indexes
	if unchanged {
		return Snapshot{Unchanged: true, Announced: -1}, nil
	}
	return Snapshot{Records: records, Announced: -1}, nil
}

// consulRecord is one instance as a record, in JSON's types (docs/target-sources.md (Consul) shows one):
// the service's address when it has one, else its node's, as host, and host:port as address.
func consulRecord(s *consul.CatalogService, nodeMetaLabels []string) Record {
	host := s.ServiceAddress
	if host == "" {
		host = s.Address
	}
	address := host
	if s.ServicePort > 0 {
		address = net.JoinHostPort(host, strconv.Itoa(s.ServicePort))
	}
	labels := map[string]any{}
	for _, k := range nodeMetaLabels {
		if v, ok := s.NodeMeta[k]; ok {
			labels[k] = v
		}
	}
	tags := make([]any, 0, len(s.ServiceTags))
	for _, t := range s.ServiceTags {
		tags = append(tags, t)
	}
	return Record{
		"node":           s.Node,
		"nodeAddress":    s.Address,
		"nodeMeta":       stringMap(s.NodeMeta),
		"datacenter":     s.Datacenter,
		"service":        s.ServiceName,
		"serviceID":      s.ServiceID,
		"serviceAddress": s.ServiceAddress,
		"host":           host,
		"port":           float64(s.ServicePort),
		"address":        address,
		"tags":           tags,
		"meta":           stringMap(s.ServiceMeta),
		"labels":         labels,
	}
}

func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
