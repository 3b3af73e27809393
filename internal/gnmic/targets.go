package gnmic

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// Targets lists the targets the collector runs (GET /api/v1/targets), sorted
// by name.
func (c *Client) Targets(ctx context.Context) ([]TargetState, error) {
	targets, err := c.getTargets(ctx, "/api/v1/targets")
	if err != nil {
		return nil, fmt.Errorf("list targets of %s: %w", c.base, err)
	}
	slices.SortFunc(targets, func(a, b TargetState) int { return strings.Compare(a.Name, b.Name) })
	return targets, nil
}

// Target reads one target (GET /api/v1/targets/{name}). An unknown target is
// an error wrapping ErrTargetNotFound.
func (c *Client) Target(ctx context.Context, name string) (TargetState, error) {
	targets, err := c.getTargets(ctx, targetPath(name, ""))
	if err == nil && len(targets) == 0 {
		err = ErrTargetNotFound
	}
	if err != nil {
		return TargetState{}, fmt.Errorf("get target %q from %s: %w", name, c.base, err)
	}
	return targets[0], nil
}

func (c *Client) getTargets(ctx context.Context, path string) ([]TargetState, error) {
	resp, err := c.do(ctx, http.MethodGet, path, nil, nil)
	if err != nil {
		return nil, err
	}
	defer drain(resp)
	if resp.StatusCode != http.StatusOK {
		return nil, targetError(readStatusError(resp.StatusCode, resp.Body))
	}
	var targets []TargetState
	if err := decodeJSON(resp.Body, &targets); err != nil {
		return nil, err
	}
	return targets, nil
}

// stateNotChanged is the collector's answer to enabling a target that is
// already running or starting.
const stateNotChanged = "target state not changed"

// EnableTarget restarts a target (POST /api/v1/targets/{name}/state/enabled),
// the only way out of the failed state. A target that already runs is left
// alone and is not an error. An unknown target is an error wrapping
// ErrTargetNotFound.
func (c *Client) EnableTarget(ctx context.Context, name string) error {
	if err := c.enableTarget(ctx, name); err != nil {
		return fmt.Errorf("enable target %q on %s: %w", name, c.base, err)
	}
	return nil
}

func (c *Client) enableTarget(ctx context.Context, name string) error {
	resp, err := c.do(ctx, http.MethodPost, targetPath(name, "/state/"+IntendedEnabled), nil, nil)
	if err != nil {
		return err
	}
	defer drain(resp)
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	statusErr := readStatusError(resp.StatusCode, resp.Body)
	if resp.StatusCode == http.StatusBadRequest && statusErr.says(stateNotChanged) {
		return nil
	}
	return targetError(statusErr)
}

// targetError turns the collector's "target not found" into
// ErrTargetNotFound. A bare 404 ("404 page not found") is not one: it means
// the route did not match, for example a wrong method or path.
func targetError(statusErr *StatusError) error {
	if statusErr.StatusCode == http.StatusNotFound && statusErr.says("target not found") {
		return ErrTargetNotFound
	}
	return statusErr
}
