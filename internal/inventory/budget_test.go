package inventory_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gnmic-operator/gnmic-operator/internal/inventory"
	"github.com/gnmic-operator/gnmic-operator/test/hostile"
)

// gzipMember is one gzip member of n bytes of r: a gzip body is any number of them in a row, so repeating one
// member makes a body that inflates to as much as wanted from a few kilobytes of work.
func gzipMember(t testing.TB, r io.Reader) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := io.Copy(zw, r); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// serveBody serves body() to every request, with header set.
func serveBody(header http.Header, body func() io.Reader) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, vs := range header {
			w.Header()[k] = vs
		}
		_, _ = io.Copy(w, body())
	}))
}

// allocated is how many bytes f allocated on the heap.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestHTTPFailsAnAnswerOverBudgetWhileReadingIt(t *testing.T) {
	gib := int64(1 << 30)
	for _, tc := range []struct {
		name    string
		header  http.Header
		body    func() io.Reader
		options func(*inventory.HTTPOptions)
		budget  string
		// maxAlloc bounds what the fetch may allocate: far less than the answer.
		maxAlloc uint64
	}{
		{
			name:   "a gzip body the transport inflates, of records, to 1 GiB",
			header: http.Header{"Content-Encoding": {"gzip"}},
			body:   hostile.GzipRecords(gib),
			budget: "sync.maxRecords", maxAlloc: 200 << 20,
		},
		{
			name:    "a gzip body the transport leaves alone (Accept-Encoding set), of records, to 1 GiB",
			header:  http.Header{"Content-Encoding": {"gzip"}},
			body:    hostile.GzipRecords(gib),
			options: func(o *inventory.HTTPOptions) { o.Header = http.Header{"Accept-Encoding": {"gzip"}} },
			budget:  "sync.maxRecords", maxAlloc: 200 << 20,
		},
		{
			name:   "a gzip body of one record of 1 GiB of blanks",
			header: http.Header{"Content-Encoding": {"gzip"}},
			body:   hostile.GzipBlankRecord(gib),
			options: func(o *inventory.HTTPOptions) {
				o.Header = http.Header{"Accept-Encoding": {"gzip"}}
				o.MaxPageBytes = 8 << 20
			},
			// The decoder holds the one record, growing its buffer to twice the page's bound at most.
			budget: "maxPageBytes", maxAlloc: 64 << 20,
		},
		{
			name:   "10 million records",
			body:   func() io.Reader { return hostile.Records(10_000_000) },
			budget: "sync.maxRecords", maxAlloc: 200 << 20,
		},
		{
			name:    "pages each within maxPageBytes, more than sync.maxBytes together",
			body:    func() io.Reader { return hostile.Records(1000) },
			options: func(o *inventory.HTTPOptions) { o.Budget.MaxBytes = 5000; o.MaxPageBytes = 1 << 20 },
			budget:  "sync.maxBytes", maxAlloc: 200 << 20,
		},
		{
			name:    "a lower sync.maxRecords",
			body:    func() io.Reader { return hostile.Records(11) },
			options: func(o *inventory.HTTPOptions) { o.Budget.MaxRecords = 10 },
			budget:  "sync.maxRecords", maxAlloc: 200 << 20,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := serveBody(tc.header, tc.body)
			defer s.Close()
			o := inventory.HTTPOptions{URL: s.URL, RecordsField: "results"}
			if tc.options != nil {
				tc.options(&o)
			}
			h, err := inventory.NewHTTP(o)
			if err != nil {
				t.Fatal(err)
			}
			var snap inventory.Snapshot
			start := time.Now()
			alloc := allocated(func() { snap, err = h.Fetch(context.Background()) })
			var be *inventory.BudgetError
			if !errors.As(err, &be) || be.Budget != tc.budget {
				t.Fatalf("err %v, want a budget error of %s", err, tc.budget)
			}
			if !strings.Contains(err.Error(), "("+tc.budget+")") {
				t.Errorf("the message %q does not name %s", err, tc.budget)
			}
			if snap.Records != nil {
				t.Errorf("a fetch over budget returned %d records", len(snap.Records))
			}
			if alloc > tc.maxAlloc {
				t.Errorf("the fetch allocated %d MiB, more than %d MiB: the answer was buffered", alloc>>20, tc.maxAlloc>>20)
			}
			t.Logf("%s after %s, %d MiB allocated", err, time.Since(start).Round(time.Millisecond), alloc>>20)
		})
	}
}

func TestHTTPReadsAGzipBodyWithinBudget(t *testing.T) {
	body := gzipMember(t, hostile.Records(500))
	for name, header := range map[string]http.Header{
		"decompressed by the transport": nil,
		"decompressed by the provider":  {"Accept-Encoding": {"gzip"}},
	} {
		t.Run(name, func(t *testing.T) {
			s := serveBody(http.Header{"Content-Encoding": {"gzip"}}, func() io.Reader { return bytes.NewReader(body) })
			defer s.Close()
			_, snap := fetch(t, inventory.HTTPOptions{URL: s.URL, RecordsField: "results", Header: header})
			if len(snap.Records) != 500 {
				t.Errorf("%d records, want 500", len(snap.Records))
			}
		})
	}
}

func TestHTTPBoundsASlowlorisInventoryByTheTimeout(t *testing.T) {
	s := httptest.NewServer(hostile.Slowloris(20 * time.Millisecond))
	defer s.Close()
	h, err := inventory.NewHTTP(inventory.HTTPOptions{URL: s.URL, RecordsField: "results", Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = h.Fetch(context.Background())
	var be *inventory.BudgetError
	if !errors.As(err, &be) || be.Budget != "timeout" {
		t.Fatalf("err %v, want a budget error of timeout", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the fetch took %s, the timeout is 300ms", took)
	}
}

func TestHTTPStopsAtTheCallersCancelWithoutCallingItABudget(t *testing.T) {
	s := httptest.NewServer(hostile.Slowloris(20 * time.Millisecond))
	defer s.Close()
	h, _ := inventory.NewHTTP(inventory.HTTPOptions{URL: s.URL, RecordsField: "results", Timeout: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := h.Fetch(ctx); err == nil || inventory.IsBudgetExceeded(err) {
		t.Errorf("err %v, want a failure that is not a budget's", err)
	}
}
