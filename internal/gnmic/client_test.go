package gnmic_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/test/fakecollector"
)

func newClient(t *testing.T, url string, opts ...gnmic.ClientOption) *gnmic.Client {
	t.Helper()
	client, err := gnmic.NewClient(url, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// twoRouters renders what the operator would push: no names, no timers.
func twoRouters() gnmic.Config {
	return gnmic.Config{
		Targets: map[string]gnmic.TargetConfig{
			"ns/r1": {Address: "10.0.0.1:57400", Username: "admin", Password: "s3cret", Insecure: true},
			"ns/r2": {Address: "10.0.0.2:57400", SkipVerify: true, Subscriptions: []string{"if"}},
		},
		Subscriptions: map[string]gnmic.SubscriptionConfig{
			"if": {Paths: []string{"/interfaces"}, Mode: gnmic.ModeStream, StreamMode: gnmic.StreamModeSample, SampleInterval: "10s"},
		},
		Outputs: map[string]map[string]any{"prom": {"type": "prometheus", "listen": ":9804"}},
	}
}

func TestAnAppliedConfigCollectsAndReappliesWithoutChange(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts []gnmic.ClientOption
	}{
		{"plain body", nil},
		{"gzip body", []gnmic.ClientOption{gnmic.WithGzipApply()}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			collector := fakecollector.StartForTest(t)
			client := newClient(t, collector.URL(), tt.opts...)
			ctx := testContext(t)

			if err := client.Apply(ctx, twoRouters()); err != nil {
				t.Fatal(err)
			}
			targets, err := client.Targets(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(targets) != 2 || targets[0].Name != "ns/r1" || !targets[0].Collecting() || !targets[1].Collecting() {
				t.Fatalf("targets = %+v, want both collecting", targets)
			}
			if err := client.Apply(ctx, twoRouters()); err != nil {
				t.Fatal(err)
			}
			last, _ := collector.LastApplied()
			if !last.Changes.Empty() {
				t.Fatalf("an identical apply changed %+v: names must equal keys", last.Changes)
			}
		})
	}
}

func TestApplyRemovesWhatTheConfigNoLongerHolds(t *testing.T) {
	collector := fakecollector.StartForTest(t)
	client := newClient(t, collector.URL())
	ctx := testContext(t)
	if err := client.Apply(ctx, twoRouters()); err != nil {
		t.Fatal(err)
	}
	if err := client.Apply(ctx, gnmic.Config{}); err != nil {
		t.Fatal(err)
	}
	if got := collector.Targets(); len(got) != 0 {
		t.Fatalf("targets left after an empty apply: %v", got)
	}
}

func TestARejectedApplyCarriesTheCollectorErrors(t *testing.T) {
	collector := fakecollector.StartForTest(t)
	client := newClient(t, collector.URL())
	cfg := gnmic.Config{Targets: map[string]gnmic.TargetConfig{"r": {Address: "a:1", Password: "s3cret"}}}

	err := client.Apply(testContext(t), cfg)
	var rejected *gnmic.ConfigRejectedError
	if !errors.As(err, &rejected) {
		t.Fatalf("err = %v, want a ConfigRejectedError", err)
	}
	if len(rejected.Errors) != 1 || !strings.Contains(rejected.Errors[0], "at least one subscription") {
		t.Fatalf("errors = %q", rejected.Errors)
	}
	if strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), collector.URL()) {
		t.Fatalf("error %q must name the collector and not quote the body", err)
	}
}

func TestTargetReadsOneTargetByItsSlashedName(t *testing.T) {
	collector := fakecollector.StartForTest(t)
	client := newClient(t, collector.URL())
	ctx := testContext(t)
	if err := client.Apply(ctx, twoRouters()); err != nil {
		t.Fatal(err)
	}
	target, err := client.Target(ctx, "ns/r1")
	if err != nil {
		t.Fatal(err)
	}
	if target.Name != "ns/r1" || target.TunnelTargetType() != "" || target.State.State != gnmic.StateRunning {
		t.Fatalf("target = %+v", target)
	}
	if want := map[string]string{"if": gnmic.SubscriptionRunning}; !reflect.DeepEqual(target.State.Subscriptions, want) {
		t.Fatalf("subscriptions = %v, want %v", target.State.Subscriptions, want)
	}
	if _, err := client.Target(ctx, "ns/absent"); !errors.Is(err, gnmic.ErrTargetNotFound) {
		t.Fatalf("unknown target: err = %v, want ErrTargetNotFound", err)
	}
}

func TestEnableTargetRestartsAFailedTargetAndIgnoresARunningOne(t *testing.T) {
	collector := fakecollector.StartForTest(t)
	client := newClient(t, collector.URL())
	ctx := testContext(t)
	collector.FailStart("ns/r2", "connection refused")
	if err := client.Apply(ctx, twoRouters()); err != nil {
		t.Fatal(err)
	}
	failed, err := client.Target(ctx, "ns/r2")
	if err != nil || !failed.Failed() || failed.State.FailedReason != "connection refused" {
		t.Fatalf("target = %+v, %v; want failed", failed, err)
	}

	for _, name := range []string{"ns/r2", "ns/r1"} {
		if err := client.EnableTarget(ctx, name); err != nil {
			t.Fatalf("enable %s: %v", name, err)
		}
	}
	if s, ok := collector.TargetStatus("ns/r2"); !ok || !s.Collecting() {
		t.Fatalf("after enable: %+v", s)
	}
	if err := client.EnableTarget(ctx, "ns/absent"); !errors.Is(err, gnmic.ErrTargetNotFound) {
		t.Fatalf("unknown target: err = %v, want ErrTargetNotFound", err)
	}
}

func TestHealthyAnswersWhileTheCollectorServes(t *testing.T) {
	collector := fakecollector.StartForTest(t)
	client := newClient(t, collector.URL())
	if err := client.Healthy(testContext(t)); err != nil {
		t.Fatal(err)
	}
	_ = collector.Close()
	if err := client.Healthy(testContext(t)); err == nil {
		t.Fatal("a closed collector is healthy")
	}
}

func TestTheClientPathEscapesTargetNames(t *testing.T) {
	collector := fakecollector.StartForTest(t)
	client := newClient(t, collector.URL())
	_, _ = client.Target(testContext(t), "ns/r 1")
	reqs := collector.Requests()
	if got := reqs[len(reqs)-1].Path; got != "/api/v1/targets/ns%2Fr%201" {
		t.Fatalf("path = %s", got)
	}
	if reqs[len(reqs)-1].Method != http.MethodGet {
		t.Fatalf("method = %s", reqs[len(reqs)-1].Method)
	}
}

func TestNewClientRejectsURLsThatAreNotHTTP(t *testing.T) {
	for _, url := range []string{"", "collector:7890", "ftp://collector:7890", "http://", "://x"} {
		if _, err := gnmic.NewClient(url, nil); err == nil {
			t.Errorf("NewClient(%q) succeeded", url)
		}
	}
	client := newClient(t, "https://collector-0.ns.svc:7890/")
	if client.BaseURL() != "https://collector-0.ns.svc:7890" {
		t.Errorf("BaseURL = %s", client.BaseURL())
	}
}

func TestRequestHeadersFromTheContextGoWithEveryRequestButNeverReplaceTheUserAgent(t *testing.T) {
	var got []http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Clone())
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	client := newClient(t, srv.URL, gnmic.WithUserAgent("gnmic-operator (member m)"))
	ctx := gnmic.WithRequestHeader(testContext(t), "Gnmic-Operator-Shard-Generation", "3")
	ctx = gnmic.WithRequestHeader(ctx, "User-Agent", "someone else")
	if err := client.Healthy(ctx); err != nil {
		t.Fatal(err)
	}
	if err := client.Healthy(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d requests, want 2", len(got))
	}
	if g, ua := got[0].Get("Gnmic-Operator-Shard-Generation"), got[0].Get("User-Agent"); g != "3" || ua != "gnmic-operator (member m)" {
		t.Errorf("first request: generation %q, User-Agent %q; want 3 and the client's own", g, ua)
	}
	if g := got[1].Get("Gnmic-Operator-Shard-Generation"); g != "" {
		t.Errorf("a request under another context carries generation %q", g)
	}
}
