package gnmic

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// APILevel is what a collector's answers say of its release: it answers as AnswersAs and every release up to
// the next class does (0.42.0: v0.42 or older; 0.43.0: v0.43; 0.44.0: v0.44 to v0.46; 0.47.0: v0.47 or newer).
// Evidence is the answer that told, for messages.
type APILevel struct {
	AnswersAs Release
	Evidence  string
}

// Lacking are the features the collector does not have.
func (l APILevel) Lacking() []Feature { return Lacking(l.AnswersAs) }

// Has tells whether the collector has f.
func (l APILevel) Has(f Feature) bool { return Has(l.AnswersAs, f) }

// Releases says which gNMIc releases answer so, such as "0.44.0 to 0.46.x" or "0.47.0 or newer".
func (l APILevel) Releases() string {
	switch l.AnswersAs {
	case answersAsOld:
		return "0.42.x or older"
	case answersAs043:
		return "0.43.x"
	case answersAs044:
		return "0.44.0 to 0.46.x"
	}
	return l.AnswersAs.String() + " or newer"
}

// TooOldForApply is the level of a collector whose answer to an apply (404, 405: no such route) says it has
// no config apply; answer is that answer.
func TooOldForApply(answer string) APILevel {
	return APILevel{AnswersAs: answersAsOld, Evidence: answer}
}

// The answers Probe tells releases apart by.
const (
	// probeTarget is a target name no collector holds: a colon cannot appear in a Kubernetes name, and the
	// operator names targets namespace/name.
	probeTarget = "gnmic-operator:api-probe"
	// stateRequired is how v0.43 to v0.46 answer POST /api/v1/config/targets/{id}/state: that route read the
	// state from a path variable it does not have (handleTargetsStatePost). v0.47.0 reads it from the body
	// (handleConfigTargetsStatePost), in the release that made tunnel-target-matches work.
	stateRequired = "target state is required"
)

var (
	answersAsOld  = mustRelease("0.42.0")
	answersAs043  = FeatureSince(FeatureConfigApply)
	answersAs044  = FeatureSince(FeatureStateStreams)
	answersAsNews = FeatureSince(FeatureTunnelTargetMatches)
)

// Probe finds out which collector API the collector serves from how it answers two requests that change
// nothing: POST /api/v1/config/targets/{id}/state with {"state": "enabled"} for a target it cannot hold, and,
// for v0.43 to v0.46, the opening of GET /api/v1/sse/targets?store=state (closed at once).
//
// It never concludes less than the collector has from an answer it does not recognise: only the answers of
// older releases, read from gNMIc's source at their tags, mark a collector older; anything else counts as the
// newest API. A transport failure or a 5xx answer is an error: nothing is concluded.
func (c *Client) Probe(ctx context.Context) (APILevel, error) {
	level, err := c.probeTargetState(ctx)
	if err != nil || level.AnswersAs != answersAs043 {
		return level, err
	}
	return c.probeStateStreams(ctx)
}

func (c *Client) probeTargetState(ctx context.Context) (APILevel, error) {
	path := "/api/v1/config/targets/" + url.PathEscape(probeTarget) + "/state"
	resp, err := c.do(ctx, http.MethodPost, path, http.Header{"Content-Type": {"application/json"}},
		strings.NewReader(`{"state":"enabled"}`))
	if err != nil {
		return APILevel{}, fmt.Errorf("probe collector API of %s: %w", c.base, err)
	}
	defer drain(resp)
	statusErr := readStatusError(resp.StatusCode, resp.Body)
	evidence := fmt.Sprintf("POST /api/v1/config/targets/{id}/state answered %d", resp.StatusCode)
	switch {
	case resp.StatusCode >= 500:
		return APILevel{}, fmt.Errorf("probe collector API of %s: %w", c.base, statusErr)
	case resp.StatusCode == http.StatusBadRequest && statusErr.says(stateRequired):
		return APILevel{AnswersAs: answersAs043, Evidence: evidence + ` "` + stateRequired + `"`}, nil
	case (resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed) && !statusErr.says(ErrTargetNotFound.Error()):
		// No such route: the router's own answer ("404 page not found"), not the handler's "target not found".
		return APILevel{AnswersAs: answersAsOld, Evidence: evidence + " (no such route)"}, nil
	}
	return APILevel{AnswersAs: answersAsNews, Evidence: evidence}, nil
}

func (c *Client) probeStateStreams(ctx context.Context) (APILevel, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // the stream stays open otherwise: only its status is wanted
	resp, err := c.do(ctx, http.MethodGet, targetStatePath, http.Header{"Accept": {"text/event-stream"}}, nil)
	if err != nil {
		return APILevel{}, fmt.Errorf("probe state streams of %s: %w", c.base, err)
	}
	defer func() { _ = resp.Body.Close() }()
	evidence := fmt.Sprintf("GET /api/v1/sse/targets answered %d", resp.StatusCode)
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed:
		return APILevel{AnswersAs: answersAs043, Evidence: evidence}, nil
	case resp.StatusCode >= 500:
		return APILevel{}, fmt.Errorf("probe state streams of %s: unexpected status %d", c.base, resp.StatusCode)
	}
	return APILevel{AnswersAs: answersAs044, Evidence: evidence + `; POST /api/v1/config/targets/{id}/state answered 400 "` +
		stateRequired + `"`}, nil
}
