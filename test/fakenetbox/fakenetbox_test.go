package fakenetbox_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/gnmic-operator/gnmic-operator/test/fakenetbox"
)

// fetchAll reads the whole list as a client following next links does, and returns how many pages it read.
func fetchAll(t *testing.T, client *http.Client, first string) int {
	t.Helper()
	pages := 0
	for next := &first; next != nil; pages++ {
		resp, err := client.Get(*next)
		if err != nil {
			t.Fatalf("GET %s: %v", *next, err)
		}
		var page struct {
			Next *string `json:"next"`
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("decode %s: %v", *next, err)
		}
		next = page.Next
	}
	return pages
}

func TestLogNamesEachRequestAndFetchesAreFirstPages(t *testing.T) {
	s := fakenetbox.Start(250, "")
	defer s.Close()
	s.IdentifyClients(func(req *http.Request) string { return req.Header.Get("X-Who") })

	whoSends := func(who string) *http.Client {
		return &http.Client{Transport: roundTripper(func(req *http.Request) (*http.Response, error) {
			req = req.Clone(req.Context())
			req.Header.Set("X-Who", who)
			return http.DefaultTransport.RoundTrip(req)
		})}
	}
	if pages := fetchAll(t, whoSends("a"), s.DevicesURL(100)); pages != 3 {
		t.Fatalf("a read %d pages of 250 devices by 100, want 3", pages)
	}
	if pages := fetchAll(t, whoSends("b"), s.DevicesURL(1000)); pages != 1 {
		t.Fatalf("b read %d pages of 250 devices by 1000, want 1", pages)
	}
	s.Fail(http.StatusServiceUnavailable)
	resp, err := whoSends("a").Get(s.DevicesURL(100))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	type seen struct {
		client string
		offset int
		status int
	}
	var got []seen
	for _, r := range s.Log() {
		if r.At.IsZero() {
			t.Errorf("request %+v has no time", r)
		}
		got = append(got, seen{r.Client, r.Offset, r.Status})
	}
	want := []seen{{"a", 0, 200}, {"a", 100, 200}, {"a", 200, 200}, {"b", 0, 200}, {"a", 0, 503}}
	if len(got) != len(want) {
		t.Fatalf("log %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("log %v, want %v", got, want)
		}
	}

	var fetches []string
	for _, f := range s.Fetches() {
		fetches = append(fetches, f.Client)
	}
	if len(fetches) != 3 || fetches[0] != "a" || fetches[1] != "b" || fetches[2] != "a" {
		t.Fatalf("fetches by %v, want [a b a]: one per first page, failed or not", fetches)
	}
}

func TestLogWithoutIdentifyLeavesClientEmpty(t *testing.T) {
	s := fakenetbox.Start(10, "secret")
	defer s.Close()
	resp, err := http.Get(s.DevicesURL(5))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	log := s.Log()
	if len(log) != 1 || log[0].Client != "" || log[0].Status != http.StatusForbidden || log[0].Offset != 0 {
		t.Fatalf("log %+v, want one unnamed 403 for the first page", log)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
