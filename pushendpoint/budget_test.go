package pushendpoint

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/push"
	"github.com/gnmic-operator/gnmic-operator/test/hostile"
)

// countingReader counts what the client sent of a body.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// gib is the hostile post: a snapshot of 1 GiB of records, made as it is sent.
const gib = 1 << 30

func TestAPushOverBudgetIsRefusedBeforeItIsRead(t *testing.T) {
	token, hmacKey := []byte("t0ken"), []byte("hmac-key")
	bearer := Source{Namespace: "ns", Name: "bearer", KeyField: "a", MaxBodyBytes: DefaultMaxBodyBytes,
		Credential: push.Credential{Scheme: push.Bearer, Secret: token}}
	signed := Source{Namespace: "ns", Name: "signed", KeyField: "a", MaxBodyBytes: DefaultMaxBodyBytes,
		Credential: push.Credential{Scheme: push.HMACSHA256, Secret: hmacKey}}
	for _, tc := range []struct {
		name    string
		path    string
		header  http.Header
		status  int
		want    string
		events  []string
		maxSent int64 // what the client may have sent before it got its answer
	}{
		{"1 GiB with a bearer token", "/targetsources/ns/bearer", http.Header{"Authorization": {"Bearer t0ken"}},
			413, "(spec.push.maxBodyBytes", []string{operatorv1alpha1.EventBudgetExceeded}, 64 << 20},
		{"1 GiB with a signature, refused before it is checked", "/targetsources/ns/signed", http.Header{push.SignatureHeader: {"sha256=00"}},
			413, "(spec.push.maxBodyBytes", []string{operatorv1alpha1.EventBudgetExceeded}, 64 << 20},
		{"1 GiB with a wrong bearer token, refused before any of it is read", "/targetsources/ns/bearer", http.Header{"Authorization": {"Bearer nope"}},
			401, "wrong bearer token", []string{EventPushRefused}, 16 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			notes := &recordedNotifier{}
			h := &handler{sources: memorySources{push: map[types.NamespacedName]Source{bearer.key(): bearer, signed.key(): signed}},
				snapshots: &memorySnapshots{stored: map[string][]push.Record{}}, notify: notes, slots: make(chan struct{}, maxConcurrentPosts)}
			s := httptest.NewServer(h)
			defer s.Close()
			body := &countingReader{r: hostile.List(gib / int64(len(hostile.Record)+1))}
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, s.URL+tc.path, body)
			req.Header = tc.header
			start := time.Now()
			resp, err := s.Client().Do(req)
			if err != nil {
				t.Fatalf("post: %v (after %d bytes sent)", err, body.n.Load())
			}
			answer, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != tc.status || !strings.Contains(string(answer), tc.want) {
				t.Errorf("answer %d %s, want %d containing %q", resp.StatusCode, answer, tc.status, tc.want)
			}
			if sent := body.n.Load(); sent > tc.maxSent {
				t.Errorf("%d MiB sent before the answer, want at most %d MiB", sent>>20, tc.maxSent>>20)
			}
			if strings.Join(notes.events, ",") != strings.Join(tc.events, ",") || notes.pushes != 0 {
				t.Errorf("events %v and %d pushes, want %v and none", notes.events, notes.pushes, tc.events)
			}
			t.Logf("%d after %s, %d MiB sent", resp.StatusCode, time.Since(start).Round(time.Millisecond), body.n.Load()>>20)
		})
	}
}

func TestABodyThatTricklesIsCutAtTheBodyTimeout(t *testing.T) {
	signed := Source{Namespace: "ns", Name: "signed", KeyField: "a", MaxBodyBytes: DefaultMaxBodyBytes,
		Credential: push.Credential{Scheme: push.HMACSHA256, Secret: []byte("hmac-key")}}
	h := &handler{sources: memorySources{push: map[types.NamespacedName]Source{signed.key(): signed}},
		snapshots: &memorySnapshots{stored: map[string][]push.Record{}}, notify: &recordedNotifier{},
		slots: make(chan struct{}, maxConcurrentPosts), bodyTimeout: 300 * time.Millisecond}
	s := httptest.NewServer(h)
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/targetsources/ns/signed",
		hostile.SlowReader(ctx, hostile.List(1000), 20*time.Millisecond))
	req.Header.Set(push.SignatureHeader, "sha256=00")
	start := time.Now()
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatalf("post: %v", err)
	}
	answer, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(answer), "did not arrive within 300ms") {
		t.Errorf("answer %d %s, want 408", resp.StatusCode, answer)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("answered after %s, the body timeout is 300ms", took)
	}
}

// TestBenchBudgetsPush is the push figure of `make bench-budgets`: a 1 GiB post through the endpoint's
// handler over HTTP, with the peak resident memory of the process meanwhile.
func TestBenchBudgetsPush(t *testing.T) {
	if os.Getenv("BENCH_BUDGETS") == "" {
		t.Skip("make bench-budgets runs it")
	}
	for _, scheme := range []push.Scheme{push.Bearer, push.HMACSHA256} {
		src := Source{Namespace: "ns", Name: "inventory", KeyField: "a", MaxBodyBytes: DefaultMaxBodyBytes,
			Credential: push.Credential{Scheme: scheme, Secret: []byte("s3cret")}}
		h := &handler{sources: memorySources{push: map[types.NamespacedName]Source{src.key(): src}},
			snapshots: &memorySnapshots{stored: map[string][]push.Record{}}, notify: &recordedNotifier{},
			slots: make(chan struct{}, maxConcurrentPosts)}
		s := httptest.NewServer(h)
		var status int
		start := time.Now()
		rss := hostile.MeasureRSS(func() {
			req, _ := http.NewRequest(http.MethodPost, s.URL+"/targetsources/ns/inventory", hostile.List(gib/int64(len(hostile.Record)+1)))
			req.Header.Set("Authorization", "Bearer s3cret")
			req.Header.Set(push.SignatureHeader, "sha256=00")
			resp, err := s.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			status = resp.StatusCode
		})
		s.Close()
		fmt.Printf("bench: %-50s %-22s %s, failed after %5.1fs\n", "1 GiB push ("+string(scheme)+")",
			fmt.Sprintf("HTTP %d maxBodyBytes", status), rss, time.Since(start).Seconds())
		if status != http.StatusRequestEntityTooLarge {
			t.Errorf("answer %d, want 413", status)
		}
	}
}
