package gnmic

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Client calls the REST API of one collector pod. It is safe for concurrent
// use. Deadlines come from the context of each call: the injected
// *http.Client should have no Timeout, which would also cut WatchTargets
// streams.
type Client struct {
	base      string
	http      *http.Client
	gzipApply bool
	userAgent string
}

// ClientOption configures a Client.
type ClientOption func(*Client)

// WithGzipApply compresses apply bodies (Content-Encoding: gzip), which the
// collector accepts; worth it for pods with thousands of targets.
func WithGzipApply() ClientOption {
	return func(c *Client) { c.gzipApply = true }
}

// DefaultUserAgent is the User-Agent of every request unless WithUserAgent says otherwise.
const DefaultUserAgent = "gnmic-operator"

// WithUserAgent names the sender in every request's User-Agent, for example the operator replica of a
// sharded operator, so that a collector's request log says who pushed what.
func WithUserAgent(ua string) ClientOption {
	return func(c *Client) { c.userAgent = ua }
}

type requestHeadersKey struct{}

// WithRequestHeader returns a context whose requests through any Client carry the header name: value, for
// example the fence generation a sharded operator's push is sent under (docs/sharding.md), so that what a
// collector received says under which ownership it was sent.
func WithRequestHeader(ctx context.Context, name, value string) context.Context {
	headers := http.Header{}
	if prev, ok := ctx.Value(requestHeadersKey{}).(http.Header); ok {
		headers = prev.Clone()
	}
	headers.Set(name, value)
	return context.WithValue(ctx, requestHeadersKey{}, headers)
}

// NewClient returns a client for the collector at baseURL, such as
// "https://collector-0.collectors.ns.svc:7890". httpClient carries the
// transport, including TLS client certificates; nil means a plain
// &http.Client{} over http.DefaultTransport.
func NewClient(baseURL string, httpClient *http.Client, opts ...ClientOption) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("parse collector URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("collector URL %q: want http(s)://host:port", baseURL)
	}
	if httpClient == nil {
		httpClient = &http.Client{}
	}
	c := &Client{base: strings.TrimSuffix(u.String(), "/"), http: httpClient}
	for _, opt := range opts {
		opt(c)
	}
	return c, nil
}

// BaseURL is the collector URL the client calls.
func (c *Client) BaseURL() string { return c.base }

// Healthy checks GET /api/v1/healthz. The collector always answers 200 while
// its API server runs: this is liveness, not readiness.
func (c *Client) Healthy(ctx context.Context) error {
	resp, err := c.do(ctx, http.MethodGet, "/api/v1/healthz", nil, nil)
	if err != nil {
		return fmt.Errorf("check health of %s: %w", c.base, err)
	}
	defer drain(resp)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("check health of %s: %w", c.base, readStatusError(resp.StatusCode, resp.Body))
	}
	return nil
}

// do sends one request. path must already be escaped (see targetPath).
func (c *Client) do(ctx context.Context, method, path string, header http.Header, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return nil, err
	}
	if fromContext, ok := ctx.Value(requestHeadersKey{}).(http.Header); ok {
		for k, v := range fromContext {
			req.Header[k] = v
		}
	}
	for k, v := range header {
		req.Header[k] = v
	}
	ua := c.userAgent
	if ua == "" {
		ua = DefaultUserAgent
	}
	req.Header.Set("User-Agent", ua)
	return c.http.Do(req)
}

// targetPath builds a per-target path. Target names contain "/" (for example
// "ns/router1"), so the name is one escaped path segment.
func targetPath(name, suffix string) string {
	return "/api/v1/targets/" + url.PathEscape(name) + suffix
}

// drain discards what is left of a body so the connection can be reused.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	_ = resp.Body.Close()
}
