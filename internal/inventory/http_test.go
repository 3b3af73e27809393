package inventory_test

import (
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gnmic-operator/gnmic-operator/internal/inventory"
	"github.com/gnmic-operator/gnmic-operator/test/fakenetbox"
)

func netboxOptions(s *fakenetbox.Server, limit int) inventory.HTTPOptions {
	return inventory.HTTPOptions{URL: s.DevicesURL(limit), RecordsField: "results", NextField: "next", CountField: "count",
		Header: http.Header{"Authorization": {"Token secret"}}}
}

func fetch(t *testing.T, o inventory.HTTPOptions) (*inventory.HTTP, inventory.Snapshot) {
	t.Helper()
	h, err := inventory.NewHTTP(o)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := h.Fetch(context.Background())
	if err != nil {
		t.Fatalf("fetch: %v", err)
	}
	return h, snap
}

func TestHTTPFollowsNextLinksThroughEveryPage(t *testing.T) {
	s := fakenetbox.Start(2345, "secret")
	defer s.Close()
	_, snap := fetch(t, netboxOptions(s, 1000))
	if len(snap.Records) != 2345 || snap.Announced != 2345 || snap.Unchanged {
		t.Fatalf("records %d, announced %d, unchanged %v", len(snap.Records), snap.Announced, snap.Unchanged)
	}
	if s.Requests(http.StatusOK) != 3 {
		t.Errorf("%d pages read, want 3", s.Requests(http.StatusOK))
	}
	seen := map[string]bool{}
	for _, r := range snap.Records {
		seen[r["name"].(string)] = true
	}
	if len(seen) != 2345 || !seen["dev-00001"] || !seen["dev-02345"] {
		t.Errorf("%d distinct devices", len(seen))
	}
}

func TestHTTPReportsWhatATruncatedAnswerAnnounced(t *testing.T) {
	s := fakenetbox.Start(300, "secret")
	defer s.Close()
	s.Truncate(120)
	_, snap := fetch(t, netboxOptions(s, 50))
	if len(snap.Records) != 120 || snap.Announced != 300 {
		t.Errorf("records %d, announced %d", len(snap.Records), snap.Announced)
	}
}

func TestHTTPAsksIfNoneMatchAndAnswersUnchanged(t *testing.T) {
	s := fakenetbox.Start(250, "secret")
	defer s.Close()
	s.SendETags(true)
	h, first := fetch(t, netboxOptions(s, 100))
	if len(first.Records) != 250 {
		t.Fatalf("records %d", len(first.Records))
	}
	snap, err := h.Fetch(context.Background())
	if err != nil || !snap.Unchanged || snap.Records != nil {
		t.Fatalf("second fetch: %+v, %v", snap, err)
	}
	if got := s.Requests(http.StatusNotModified); got != 3 {
		t.Errorf("%d answers 304, want 3 (one per page)", got)
	}
	// One device of the last page changes: that page is read in full, the others come from their 304.
	s.Change(func(d *fakenetbox.Device) { d.Platform.Slug = "eos" }, 240)
	snap, err = h.Fetch(context.Background())
	if err != nil || snap.Unchanged || len(snap.Records) != 250 {
		t.Fatalf("third fetch: unchanged %v, %d records, %v", snap.Unchanged, len(snap.Records), err)
	}
	if got := snap.Records[239]["platform"].(map[string]any)["slug"]; got != "eos" {
		t.Errorf("device 240's platform %v", got)
	}
	if got := s.Requests(http.StatusNotModified); got != 5 {
		t.Errorf("%d answers 304, want 5", got)
	}
}

func TestHTTPFailsTheWholeFetch(t *testing.T) {
	s := fakenetbox.Start(10, "secret")
	defer s.Close()
	for _, tc := range []struct {
		name   string
		change func(*inventory.HTTPOptions)
		server func()
		want   string
	}{
		{"without credentials", func(o *inventory.HTTPOptions) { o.Header = nil }, nil, "403 Forbidden"},
		{"on a server error", nil, func() { s.Fail(http.StatusInternalServerError) }, "HTTP 500"},
		{"when the records are not where they are said to be", func(o *inventory.HTTPOptions) { o.RecordsField = "data" }, nil, "no data in the page"},
		{"when there are more pages than allowed", func(o *inventory.HTTPOptions) { o.URL = s.DevicesURL(2); o.MaxPages = 3 }, nil, "more than 3 pages"},
		{"when a page is too large", func(o *inventory.HTTPOptions) { o.MaxPageBytes = 1024 }, nil, "larger than 1024 bytes"},
		{"when the count is not a number", func(o *inventory.HTTPOptions) { o.CountField = "next" }, nil, "not a count"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.Fail(0)
			if tc.server != nil {
				tc.server()
			}
			o := netboxOptions(s, 1000)
			if tc.change != nil {
				tc.change(&o)
			}
			h, err := inventory.NewHTTP(o)
			if err != nil {
				t.Fatal(err)
			}
			snap, err := h.Fetch(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want %q", err, tc.want)
			}
			if snap.Records != nil {
				t.Errorf("a failed fetch returned %d records", len(snap.Records))
			}
			if strings.Contains(fmt.Sprint(err), "secret") {
				t.Errorf("the error shows the token: %v", err)
			}
		})
	}
}

// serveJSON serves fixed pages by path.
func serveJSON(pages map[string]string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(body))
	}))
}

func TestHTTPKeepsToTheInventorysHost(t *testing.T) {
	s := serveJSON(map[string]string{
		"/a": `{"results": [{"name": "x"}], "next": "/b"}`,
		"/b": `{"results": [{"name": "y"}], "next": "http://elsewhere.example/c"}`,
		"/l": `{"results": [], "next": "/l"}`,
	})
	defer s.Close()
	h, _ := inventory.NewHTTP(inventory.HTTPOptions{URL: s.URL + "/a", RecordsField: "results", NextField: "next"})
	if _, err := h.Fetch(context.Background()); err == nil || !strings.Contains(err.Error(), "outside the inventory's host") {
		t.Errorf("err %v", err)
	}
	h, _ = inventory.NewHTTP(inventory.HTTPOptions{URL: s.URL + "/l", RecordsField: "results", NextField: "next"})
	if _, err := h.Fetch(context.Background()); err == nil || !strings.Contains(err.Error(), "the pages loop") {
		t.Errorf("err %v", err)
	}
}

func TestHTTPReadsATopLevelListOverTLSWithItsCA(t *testing.T) {
	s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, password, _ := r.BasicAuth()
		if user != "u" || password != "p" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(`[{"targets": ["10.0.0.1:57400"], "labels": {"role": "leaf"}}]`))
	}))
	defer s.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
	_, snap := fetch(t, inventory.HTTPOptions{URL: s.URL, CABundle: ca, Username: "u", Password: "p"})
	if len(snap.Records) != 1 || snap.Announced != -1 {
		t.Errorf("%+v", snap)
	}
	h, _ := inventory.NewHTTP(inventory.HTTPOptions{URL: s.URL, Username: "u", Password: "p"})
	if _, err := h.Fetch(context.Background()); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without the CA: %v", err)
	}
}

// recordingTransport records the URL of every request sent with credentials.
type recordingTransport struct {
	next http.RoundTripper
	sent []string
}

func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("Authorization") != "" {
		r.sent = append(r.sent, req.URL.String())
	}
	return r.next.RoundTrip(req)
}

func TestHTTPNeverTakesTheCredentialsFromHTTPSToHTTP(t *testing.T) {
	var plain string // the inventory's own URL with http:// instead of https://
	s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, plain+"/page", http.StatusFound)
		case "/next":
			_, _ = w.Write([]byte(`{"results": [{"name": "x"}], "next": "` + plain + `/page"}`))
		case "/page":
			_, _ = w.Write([]byte(`{"results": [{"name": "y"}], "next": null}`))
		}
	}))
	defer s.Close()
	plain = "http://" + strings.TrimPrefix(s.URL, "https://")
	for _, tc := range []struct {
		name, path, want string
	}{
		{"a redirect to http on the same host", "/redirect", "only redirects within " + s.URL + " are followed"},
		{"a next link to http on the same host", "/next", "outside the inventory's host and scheme " + s.URL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recordingTransport{next: s.Client().Transport}
			h, err := inventory.NewHTTP(inventory.HTTPOptions{URL: s.URL + tc.path, RecordsField: "results", NextField: "next",
				Header: http.Header{"Authorization": {"Token secret"}}, Transport: rec})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := h.Fetch(context.Background()); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want %q", err, tc.want)
			}
			for _, u := range rec.sent {
				if strings.HasPrefix(u, "http://") {
					t.Errorf("the credentials went to %s", u)
				}
			}
			if len(rec.sent) != 1 {
				t.Errorf("credentials sent %d times (%v), want once, to the first page", len(rec.sent), rec.sent)
			}
		})
	}
}

func TestHTTPFollowsARedirectWithinTheInventory(t *testing.T) {
	s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new", http.StatusMovedPermanently)
			return
		}
		_, _ = w.Write([]byte(`{"results": [{"name": "y"}]}`))
	}))
	defer s.Close()
	_, snap := fetch(t, inventory.HTTPOptions{URL: s.URL + "/old", RecordsField: "results", Transport: s.Client().Transport})
	if len(snap.Records) != 1 {
		t.Errorf("%d records, want 1", len(snap.Records))
	}
}

func TestHTTPSaysWhatIsWrongWithAPage(t *testing.T) {
	s := serveJSON(map[string]string{
		"/garbage":   `{"results": [{"name": "x"}`,
		"/object":    `{"results": {"name": "x"}}`,
		"/scalar":    `{"results": [1]}`,
		"/two-docs":  `{"results": []} {"results": []}`,
		"/somewhere": `{"data": {"devices": [{"name": "x"}], "next": null}, "count": 1}`,
	})
	defer s.Close()
	for path, want := range map[string]string{
		"/garbage":  "not JSON: unexpected EOF",
		"/object":   "results is an object, not a list of records",
		"/scalar":   "record 0 is a number, not an object",
		"/two-docs": "more than one JSON document",
	} {
		h, _ := inventory.NewHTTP(inventory.HTTPOptions{URL: s.URL + path, RecordsField: "results"})
		if _, err := h.Fetch(context.Background()); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want %q", path, err, want)
		}
	}
	_, snap := fetch(t, inventory.HTTPOptions{URL: s.URL + "/somewhere", RecordsField: "data.devices", NextField: "data.next", CountField: "count"})
	if len(snap.Records) != 1 || snap.Announced != 1 {
		t.Errorf("%d records, announced %d; want 1 and 1", len(snap.Records), snap.Announced)
	}
}
