package inventory

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// HTTPOptions configure an HTTP inventory. The controller fills them from a TargetSource's spec.http and its
// Secrets.
type HTTPOptions struct {
	// URL of the first page.
	URL string
	// Header is sent with every request (Authorization included, when the inventory wants a token).
	Header http.Header
	// Username and Password, when Username is set, are sent as HTTP basic credentials.
	Username, Password string

	// CABundle (PEM) verifies the inventory's certificate instead of the system's CAs.
	CABundle []byte
	// ServerName overrides the name verified in the certificate.
	ServerName string
	// InsecureSkipVerify accepts any certificate.
	InsecureSkipVerify bool

	// RecordsField is the dotted path of the records in a page; empty when the page is the list.
	RecordsField string
	// NextField is the dotted path of the next page's URL; empty when the inventory is one page.
	NextField string
	// CountField is the dotted path, in the first page, of the number of records the inventory holds.
	CountField string
	// MaxPages bounds the pages of one fetch (0: 1000).
	MaxPages int
	// MaxPageBytes bounds a page's body (0: 64 MiB).
	MaxPageBytes int64
	// Timeout of one whole fetch (0: 60s).
	Timeout time.Duration
	// Budget bounds the records and bytes of one fetch, every page together.
	Budget Budget

	// Transport replaces the HTTP transport built from the TLS options (tests).
	Transport http.RoundTripper
}

// HTTP is an inventory behind a JSON API, read page by page. It remembers each page's ETag and body so that
// the next fetch asks with If-None-Match; when every page answers 304 Not Modified the snapshot is Unchanged.
type HTTP struct {
	opts   HTTPOptions
	client *http.Client
	first  *url.URL
	// pages of the last successful fetch, in order, for If-None-Match.
	pages []cachedPage
}

// cachedPage is a page of the last successful fetch that came with an ETag.
type cachedPage struct {
	url  string
	etag string
	body []byte
}

// NewHTTP checks the options and builds the client.
func NewHTTP(o HTTPOptions) (*HTTP, error) {
	first, err := url.Parse(o.URL)
	if err != nil || (first.Scheme != "http" && first.Scheme != "https") || first.Host == "" {
		return nil, fmt.Errorf("inventory url %q is not an absolute http:// or https:// URL", o.URL)
	}
	if o.MaxPages <= 0 {
		o.MaxPages = 1000
	}
	if o.MaxPageBytes <= 0 {
		o.MaxPageBytes = 64 << 20
	}
	if o.Timeout <= 0 {
		o.Timeout = 60 * time.Second
	}
	transport := o.Transport
	if transport == nil {
		tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: o.ServerName, InsecureSkipVerify: o.InsecureSkipVerify} //nolint:gosec // off unless the user asks
		if len(o.CABundle) > 0 {
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(o.CABundle) {
				return nil, errors.New("the inventory's CA bundle holds no PEM certificate")
			}
			tlsConfig.RootCAs = pool
		}
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = tlsConfig
		transport = t
	}
	client := &http.Client{
		Transport: transport,
		// A redirect to another host, or from https to http, would take the credentials along: refuse it.
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if !sameOrigin(req.URL, first) || len(via) >= 5 {
				return fmt.Errorf("the inventory redirects to %s: only redirects within %s://%s are followed", req.URL.Redacted(), first.Scheme, first.Host)
			}
			return nil
		},
	}
	return &HTTP{opts: o, client: client, first: first}, nil
}

// Fetch reads every page. A page that fails, is not JSON, links to a page on another scheme or host, or goes
// over the budget fails the whole fetch: a partial inventory is never returned.
func (h *HTTP) Fetch(ctx context.Context) (Snapshot, error) {
	fetchCtx, cancel := context.WithTimeout(ctx, h.opts.Timeout)
	defer cancel()
	snap, err := h.fetch(fetchCtx)
	return snap, overTime(ctx, fetchCtx, err, h.opts.Timeout, "timeout")
}

func (h *HTTP) fetch(ctx context.Context) (Snapshot, error) {
	snap := Snapshot{Announced: -1}
	budget := newSyncBudget(h.opts.Budget)
	fields := newPageFields(h.opts.RecordsField, h.opts.NextField, h.opts.CountField)
	onRecord := func(r Record) error {
		if err := budget.record(); err != nil {
			return err
		}
		snap.Records = append(snap.Records, r)
		return nil
	}
	var pages []cachedPage
	allNotModified := len(h.pages) > 0
	seen := map[string]bool{}
	next := h.first
	for n := 0; next != nil; n++ {
		if n >= h.opts.MaxPages {
			return Snapshot{}, fmt.Errorf("the inventory has more than %d pages (pagination.maxPages)", h.opts.MaxPages)
		}
		if seen[next.String()] {
			return Snapshot{}, fmt.Errorf("page %d links back to %s: the pages loop", n+1, next.Redacted())
		}
		seen[next.String()] = true
		var cached *cachedPage
		if n < len(h.pages) && h.pages[n].url == next.String() {
			cached = &h.pages[n]
		}
		read, err := h.readPage(ctx, next, cached, budget, fields, onRecord)
		if err != nil {
			return Snapshot{}, fmt.Errorf("page %d (%s): %w", n+1, next.Redacted(), err)
		}
		allNotModified = allNotModified && read.notModified
		pages = append(pages, read.cache)
		if n == 0 && h.opts.CountField != "" {
			if snap.Announced, err = countOf(read.values.count, read.values.countFound, h.opts.CountField); err != nil {
				return Snapshot{}, fmt.Errorf("page 1 (%s): %w", next.Redacted(), err)
			}
		}
		if next, err = h.nextPage(read.values.next, next); err != nil {
			return Snapshot{}, fmt.Errorf("page %d: %w", n+1, err)
		}
	}
	unchanged := allNotModified && len(pages) == len(h.pages)
	h.pages = pages
	if unchanged {
		return Snapshot{Unchanged: true, Announced: snap.Announced}, nil
	}
	return snap, nil
}

// readPage is what one page read gave.
type readPage struct {
	values      pageValues
	cache       cachedPage
	notModified bool
}

// readPage reads and decodes one page through the budget; with a cached page of the same URL it asks
// If-None-Match and, on 304, decodes the cached body. A page that comes with an ETag is kept (its body as
// read, within maxPageBytes) for the next fetch to ask with.
func (h *HTTP) readPage(ctx context.Context, u *url.URL, cached *cachedPage, budget *syncBudget, fields pageFields,
	onRecord func(Record) error) (readPage, error) {
	body, etag, notModified, err := h.get(ctx, u, cached)
	if err != nil {
		return readPage{}, err
	}
	defer func() { _ = body.Close() }()
	read := readPage{cache: cachedPage{url: u.String()}, notModified: notModified}
	var r io.Reader = &budgetReader{r: body, pageMax: h.opts.MaxPageBytes, pageBudget: "maxPageBytes", sync: budget}
	var kept *bytes.Buffer
	if etag != "" && !notModified {
		kept = &bytes.Buffer{}
		r = io.TeeReader(r, kept)
	}
	if read.values, err = decodePage(r, fields, onRecord); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) || errors.Is(err, io.ErrUnexpectedEOF) {
			return readPage{}, fmt.Errorf("not JSON: %w", err)
		}
		return readPage{}, err
	}
	switch {
	case notModified:
		read.cache = *cached
	case etag != "":
		read.cache.etag, read.cache.body = etag, kept.Bytes()
	}
	return read, nil
}

// get asks for one page; with a cached page of the same URL it asks If-None-Match and, on 304, returns the
// cached body. The body is plain JSON: a gzip body the transport did not decompress itself (it asked for
// none) is decompressed here, and counted against the budget only then.
func (h *HTTP) get(ctx context.Context, u *url.URL, cached *cachedPage) (body io.ReadCloser, etag string, notModified bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, "", false, err
	}
	for k, vs := range h.opts.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json")
	}
	if h.opts.Username != "" {
		req.SetBasicAuth(h.opts.Username, h.opts.Password)
	}
	if cached != nil && cached.etag != "" {
		req.Header.Set("If-None-Match", cached.etag)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, "", false, err
	}
	switch {
	case resp.StatusCode == http.StatusNotModified && cached != nil && cached.etag != "":
		_ = resp.Body.Close()
		return io.NopCloser(bytes.NewReader(cached.body)), cached.etag, true, nil
	case resp.StatusCode != http.StatusOK:
		defer func() { _ = resp.Body.Close() }()
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
		return nil, "", false, fmt.Errorf("HTTP %s: %s", resp.Status, bytes.TrimSpace(snippet))
	}
	body, err = decompressed(resp)
	if err != nil {
		_ = resp.Body.Close()
		return nil, "", false, err
	}
	return body, resp.Header.Get("ETag"), false, nil
}

// decompressed is the response's body as plain bytes.
func decompressed(resp *http.Response) (io.ReadCloser, error) {
	enc := strings.TrimSpace(resp.Header.Get("Content-Encoding"))
	switch {
	case resp.Uncompressed || enc == "" || strings.EqualFold(enc, "identity"):
		return resp.Body, nil
	case strings.EqualFold(enc, "gzip"):
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("the gzip body: %w", err)
		}
		return struct {
			io.Reader
			io.Closer
		}{zr, resp.Body}, nil
	}
	return nil, fmt.Errorf("Content-Encoding %s is not supported (gzip is)", enc)
}

// sameOrigin is true when u is on origin's scheme and host: where the credentials may go.
func sameOrigin(u, origin *url.URL) bool {
	return u.Scheme == origin.Scheme && u.Host == origin.Host
}

// nextPage is the URL of the page after page (read from the current one), or nil on the last page. It stays
// on the first page's scheme and host: the credentials go nowhere else.
func (h *HTTP) nextPage(v any, current *url.URL) (*url.URL, error) {
	if h.opts.NextField == "" || v == nil {
		return nil, nil
	}
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("%s is %s, not a URL", h.opts.NextField, jsonKind(v))
	}
	if s == "" {
		return nil, nil
	}
	ref, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("%s %q is not a URL: %w", h.opts.NextField, s, err)
	}
	next := current.ResolveReference(ref)
	if !sameOrigin(next, h.first) {
		return nil, fmt.Errorf("%s links to %s, outside the inventory's host and scheme %s://%s", h.opts.NextField, next.Redacted(), h.first.Scheme, h.first.Host)
	}
	return next, nil
}
