package inventory_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gnmic-operator/gnmic-operator/internal/inventory"
	"github.com/gnmic-operator/gnmic-operator/test/hostile"
)

// fakeConsul answers every catalog read with body().
func fakeConsul(body func() io.Reader) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Consul-Index", "7")
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.Copy(w, body())
	}))
}

func TestConsulFailsAnAnswerOverBudgetWhileReadingIt(t *testing.T) {
	for _, tc := range []struct {
		name   string
		body   func() io.Reader
		budget inventory.Budget
		want   string
	}{
		{"10 million instances", func() io.Reader { return hostile.List(10_000_000) }, inventory.Budget{}, "sync.maxRecords"},
		{"an answer over sync.maxBytes", func() io.Reader { return hostile.List(10_000) }, inventory.Budget{MaxBytes: 4096}, "sync.maxBytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := fakeConsul(tc.body)
			defer s.Close()
			c, err := inventory.NewConsul(inventory.ConsulOptions{Address: s.URL, Services: []string{"gnmi"}, Budget: tc.budget})
			if err != nil {
				t.Fatal(err)
			}
			var snap inventory.Snapshot
			alloc := allocated(func() { snap, err = c.Fetch(context.Background()) })
			var be *inventory.BudgetError
			if !errors.As(err, &be) || be.Budget != tc.want {
				t.Fatalf("err %v, want a budget error of %s", err, tc.want)
			}
			if snap.Records != nil {
				t.Errorf("a fetch over budget returned %d records", len(snap.Records))
			}
			if alloc > 400<<20 {
				t.Errorf("the fetch allocated %d MiB: the answer was decoded past its budget", alloc>>20)
			}
		})
	}
}

func TestConsulReadsAnAnswerWithinBudget(t *testing.T) {
	s := fakeConsul(func() io.Reader { return hostile.List(100) })
	defer s.Close()
	c, err := inventory.NewConsul(inventory.ConsulOptions{Address: s.URL, Services: []string{"gnmi"}, Budget: inventory.Budget{MaxRecords: 100}})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := c.Fetch(context.Background())
	if err != nil || len(snap.Records) != 100 {
		t.Fatalf("%d records, err %v", len(snap.Records), err)
	}
}

func TestConsulBoundsASlowlorisAnswerByTheTimeout(t *testing.T) {
	s := httptest.NewServer(hostile.Slowloris(20 * time.Millisecond))
	defer s.Close()
	c, err := inventory.NewConsul(inventory.ConsulOptions{Address: s.URL, Services: []string{"gnmi"}, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = c.Fetch(context.Background())
	if !inventory.IsBudgetExceeded(err) || time.Since(start) > 3*time.Second {
		t.Errorf("err %v after %s, want a budget error of timeout", err, time.Since(start))
	}
}

func TestConsulFollowsNoRedirectWithItsToken(t *testing.T) {
	var tokens []string
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere" {
			tokens = append(tokens, r.Header.Get("X-Consul-Token"))
			return
		}
		http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
	}))
	defer s.Close()
	c, err := inventory.NewConsul(inventory.ConsulOptions{Address: s.URL, Services: []string{"gnmi"}, Token: "t0ken"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Fetch(context.Background()); err == nil || !strings.Contains(err.Error(), "redirects are not followed") {
		t.Errorf("err %v, want the redirect refused", err)
	}
	if len(tokens) > 0 {
		t.Errorf("the redirect was followed, with tokens %q", tokens)
	}
}
