package gnmic_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
)

// answering serves one canned answer to every request.
func answering(t *testing.T, status int, body string) *gnmic.Client {
	t.Helper()
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(server.Close)
	return newClient(t, server.URL)
}

func secretTarget() gnmic.Config {
	return gnmic.Config{
		Targets:       map[string]gnmic.TargetConfig{"r": {Address: "a:1", Password: "s3cret"}},
		Subscriptions: map[string]gnmic.SubscriptionConfig{"s": {Paths: []string{"/"}}},
	}
}

func TestApplyErrorsCarryStatusAndCollectorMessagesButNeverTheBody(t *testing.T) {
	long := strings.Repeat("x", 1000)
	tests := []struct {
		name        string
		status      int
		body        string
		wantErrors  []string
		wantExcerpt string
		rejected    bool
	}{
		{"400 with errors", 400, `{"errors":["validate error: bad"]}`, []string{"validate error: bad"}, "", true},
		{"400 without an errors body", 400, "Client sent an HTTP request to an HTTPS server.\n", nil, "Client sent an HTTP request to an HTTPS server.", false},
		{"500 with errors", 500, `{"errors":["set target error: boom"]}`, []string{"set target error: boom"}, "", false},
		{"502 from a proxy", 502, "<html>\n<body>bad gateway</body></html>", nil, "<html> <body>bad gateway</body></html>", false},
		{"long body is cut", 503, long, nil, long[:200] + "...", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := answering(t, tt.status, tt.body).Apply(testContext(t), secretTarget())
			if err == nil {
				t.Fatal("Apply succeeded")
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Fatalf("error quotes the request body: %v", err)
			}
			var rejected *gnmic.ConfigRejectedError
			if errors.As(err, &rejected) != tt.rejected {
				t.Fatalf("err = %v, rejected = %v, want %v", err, !tt.rejected, tt.rejected)
			}
			if tt.rejected {
				if strings.Join(rejected.Errors, "|") != strings.Join(tt.wantErrors, "|") {
					t.Fatalf("errors = %q", rejected.Errors)
				}
				return
			}
			var statusErr *gnmic.StatusError
			if !errors.As(err, &statusErr) || statusErr.StatusCode != tt.status {
				t.Fatalf("err = %v, want a StatusError %d", err, tt.status)
			}
			if strings.Join(statusErr.Errors, "|") != strings.Join(tt.wantErrors, "|") || statusErr.Excerpt != tt.wantExcerpt {
				t.Fatalf("status error = %+v", statusErr)
			}
		})
	}
}

func TestTargetCallsDistinguishAnUnknownTargetFromAnUnknownRoute(t *testing.T) {
	tests := []struct {
		name         string
		status       int
		body         string
		wantNotFound bool
	}{
		{"collector says target not found", 404, `{"errors":["target not found"]}`, true},
		{"older collector says it in plain text", 404, "target not found\n", true},
		{"router found no route", 404, "404 page not found\n", false},
		{"server error", 500, `{"errors":["boom"]}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := answering(t, tt.status, tt.body)
			_, getErr := client.Target(testContext(t), "ns/r1")
			enableErr := client.EnableTarget(testContext(t), "ns/r1")
			for _, err := range []error{getErr, enableErr} {
				if err == nil || errors.Is(err, gnmic.ErrTargetNotFound) != tt.wantNotFound {
					t.Errorf("err = %v, want not-found %v", err, tt.wantNotFound)
				}
			}
		})
	}
}

func TestEnableTargetTreatsStateNotChangedAsSuccess(t *testing.T) {
	for _, body := range []string{`{"errors":["target state not changed"]}`, "target state not changed\n"} {
		if err := answering(t, 400, body).EnableTarget(testContext(t), "r"); err != nil {
			t.Errorf("body %q: %v", body, err)
		}
	}
	if err := answering(t, 400, `{"errors":["target state is required"]}`).EnableTarget(testContext(t), "r"); err == nil {
		t.Error("another 400 is an error")
	}
}

func TestTargetsRejectsAnswersThatAreNotTargetLists(t *testing.T) {
	for _, body := range []string{"", "not json", `{"name":"r"}`} {
		if _, err := answering(t, 200, body).Targets(testContext(t)); err == nil {
			t.Errorf("body %q decoded", body)
		}
	}
	if _, err := answering(t, 200, `[]`).Target(testContext(t), "r"); !errors.Is(err, gnmic.ErrTargetNotFound) {
		t.Errorf("an empty list for one target: %v, want ErrTargetNotFound", err)
	}
}

func TestHealthyFailsOnAnyOtherStatus(t *testing.T) {
	if err := answering(t, 503, "down").Healthy(testContext(t)); err == nil {
		t.Fatal("503 is healthy")
	}
}
