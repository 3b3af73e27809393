package gnmic_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/test/fakecollector"
)

// serveRelease serves a fake collector that answers as gNMIc release over httptest.
func serveRelease(t *testing.T, release string) (*fakecollector.Collector, *gnmic.Client) {
	t.Helper()
	collector := fakecollector.New(fakecollector.WithRelease(release))
	server := httptest.NewServer(collector.Handler())
	t.Cleanup(func() {
		_ = collector.Close() // ends the event streams first, or server.Close waits for them
		server.Close()
	})
	return collector, newClient(t, server.URL)
}

func TestProbeTellsEachReleaseByItsAnswers(t *testing.T) {
	for _, tt := range []struct {
		release, answersAs string
		lacking            []gnmic.Feature
	}{
		{"0.42.0", "0.42.0", []gnmic.Feature{gnmic.FeatureConfigApply, gnmic.FeatureResponseCounters,
			gnmic.FeatureGNMIServer, gnmic.FeatureStateStreams, gnmic.FeatureTunnelTargetMatches}},
		{"0.43.0", "0.43.0", []gnmic.Feature{gnmic.FeatureStateStreams, gnmic.FeatureTunnelTargetMatches}},
		{"0.44.0", "0.44.0", []gnmic.Feature{gnmic.FeatureTunnelTargetMatches}},
		{"0.45.0", "0.44.0", []gnmic.Feature{gnmic.FeatureTunnelTargetMatches}},
		{"0.46.0", "0.44.0", []gnmic.Feature{gnmic.FeatureTunnelTargetMatches}},
		{"0.47.0", "0.47.0", nil},
	} {
		t.Run(tt.release, func(t *testing.T) {
			_, client := serveRelease(t, tt.release)
			level, err := client.Probe(testContext(t))
			if err != nil {
				t.Fatal(err)
			}
			if level.AnswersAs.String() != tt.answersAs || !reflect.DeepEqual(level.Lacking(), tt.lacking) {
				t.Fatalf("gNMIc %s probes as %s lacking %v (%s), want %s lacking %v",
					tt.release, level.AnswersAs, level.Lacking(), level.Evidence, tt.answersAs, tt.lacking)
			}
			if level.Evidence == "" {
				t.Fatal("the level carries no evidence")
			}
		})
	}
}

func TestApplyToV042IsUnsupported(t *testing.T) {
	_, client := serveRelease(t, "0.42.0")
	err := client.Apply(testContext(t), twoRouters())
	var unsupported *gnmic.UnsupportedError
	if !errors.As(err, &unsupported) || unsupported.Feature != gnmic.FeatureConfigApply {
		t.Fatalf("Apply to gNMIc 0.42.0 = %v, want an *UnsupportedError for %q", err, gnmic.FeatureConfigApply)
	}
}

func TestProbeChangesNothingOnTheCollector(t *testing.T) {
	for _, release := range []string{"0.42.0", "0.43.0", "0.44.0", "0.45.0", "0.46.0", "0.47.0"} {
		t.Run(release, func(t *testing.T) {
			collector, client := serveRelease(t, release)
			ctx := testContext(t)
			if release != "0.42.0" { // nothing can configure 0.42.0
				if err := client.Apply(ctx, twoRouters()); err != nil {
					t.Fatal(err)
				}
			}
			seen := func() []string {
				out := []string{strings.Join(collector.ConfiguredTargets(), ",")}
				for _, path := range []string{"/api/v1/config", "/api/v1/targets"} {
					out = append(out, get(t, client.BaseURL()+path))
				}
				return out
			}
			before, applies := seen(), collector.ApplyCount()
			if _, err := client.Probe(ctx); err != nil {
				t.Fatal(err)
			}
			if after := seen(); !reflect.DeepEqual(after, before) || collector.ApplyCount() != applies {
				t.Fatalf("gNMIc %s after Probe:\n%q\nbefore:\n%q", release, after, before)
			}
		})
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Status + " " + string(body)
}

// probing answers the probe's target state request with stateStatus and stateBody, and its event stream
// request with streamStatus.
func probing(t *testing.T, stateStatus int, stateBody string, streamStatus int) *gnmic.Client {
	t.Helper()
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/v1/sse/") {
			w.WriteHeader(streamStatus)
			return
		}
		w.WriteHeader(stateStatus)
		_, _ = w.Write([]byte(stateBody))
	}))
	t.Cleanup(server.Close)
	return newClient(t, server.URL)
}

func TestProbeCountsAnAnswerItDoesNotKnowAsTheNewestAPI(t *testing.T) {
	required := `{"errors":["target state is required"]}`
	for _, tt := range []struct {
		name         string
		stateStatus  int
		stateBody    string
		streamStatus int
		want         string
	}{
		{"418", http.StatusTeapot, "", http.StatusNotFound, gnmic.DefaultRelease},
		{"200", http.StatusOK, "", http.StatusNotFound, gnmic.DefaultRelease},
		{"400 with another message", http.StatusBadRequest, `{"errors":["bad"]}`, http.StatusNotFound, gnmic.DefaultRelease},
		// Once the state answer says v0.43 to v0.46, only a 404 stream marks v0.43.
		{"a 418 stream", http.StatusBadRequest, required, http.StatusTeapot, "0.44.0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			level, err := probing(t, tt.stateStatus, tt.stateBody, tt.streamStatus).Probe(testContext(t))
			if err != nil {
				t.Fatal(err)
			}
			if level.AnswersAs.String() != tt.want {
				t.Fatalf("Probe = %s (%s), want %s", level.AnswersAs, level.Evidence, tt.want)
			}
		})
	}
}

func TestProbeConcludesNothingFromAFailure(t *testing.T) {
	required := `{"errors":["target state is required"]}`
	for _, tt := range []struct {
		name   string
		client func(t *testing.T) *gnmic.Client
	}{
		{"503", func(t *testing.T) *gnmic.Client { return probing(t, http.StatusServiceUnavailable, "", http.StatusOK) }},
		{"503 stream", func(t *testing.T) *gnmic.Client {
			return probing(t, http.StatusBadRequest, required, http.StatusServiceUnavailable)
		}},
		{"closed connection", func(t *testing.T) *gnmic.Client {
			server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					_ = conn.Close()
				}
			}))
			t.Cleanup(server.Close)
			return newClient(t, server.URL)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if level, err := tt.client(t).Probe(testContext(t)); err == nil {
				t.Fatalf("Probe = %s (%s), want an error", level.AnswersAs, level.Evidence)
			}
		})
	}
}
