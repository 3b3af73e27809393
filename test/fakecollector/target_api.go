package fakecollector

import (
	"encoding/json"
	"net/http"
)

// targetView is one element of GET /api/v1/targets.
type targetView struct {
	Name   string         `json:"name"`
	Config map[string]any `json:"config"`
	State  TargetStatus   `json:"state"`
}

// maskedFields are hidden in the config that GET /api/v1/targets returns, from v0.46.0 on.
var maskedFields = []string{"password", "token"}

// targetViewV043 is one element of GET /api/v1/targets in v0.43.0
// (TargetResponse, pkg/collector/api/server/targets.go): the state is a
// string, and the subscriptions are listed beside it.
type targetViewV043 struct {
	Name          string                       `json:"name"`
	Config        map[string]any               `json:"config"`
	Subscriptions map[string]subscriptionState `json:"subscriptions"`
	State         string                       `json:"state"`
}

type subscriptionState struct {
	Name  string `json:"name"`
	State string `json:"state"`
}

// view shows a target as it runs, in the shape of the collector's release:
// its config is the one last acted on, which a queued or dropped change has
// not replaced. Callers hold c.mu.
func (c *Collector) view(name string, one bool) any {
	t := c.targets[name]
	config := deepCopy(t.config).(map[string]any)
	if c.release.redactsTargets() {
		config = masked(config)
	}
	if c.release.targetStateObject() {
		return targetView{Name: name, Config: config, State: t.status.clone()}
	}
	// v0.43.0 lists every subscription of the target, running when it has a subscribe client; the answer
	// about one target lists only those that have one.
	subs := map[string]subscriptionState{}
	for sub, state := range t.status.Subscriptions {
		if !one || state == SubscriptionRunning {
			subs[sub] = subscriptionState{Name: sub, State: state}
		}
	}
	return targetViewV043{Name: name, Config: config, Subscriptions: subs, State: t.status.State}
}

func masked(target map[string]any) map[string]any {
	config := deepCopy(target).(map[string]any)
	for _, f := range maskedFields {
		if _, ok := config[f]; ok {
			config[f] = "****"
		}
	}
	return config
}

// handleTargets serves GET /api/v1/targets.
func (c *Collector) handleTargets(w http.ResponseWriter, _ *http.Request) {
	c.mu.Lock()
	views := make([]any, 0, len(c.targets))
	for _, name := range sortedKeys(c.targets) {
		views = append(views, c.view(name, false))
	}
	c.mu.Unlock()
	writeJSON(w, http.StatusOK, views)
}

// handleTarget serves GET /api/v1/targets/{name}: a one-element array.
func (c *Collector) handleTarget(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	c.mu.Lock()
	_, ok := c.targets[name]
	var views []any
	if ok {
		views = []any{c.view(name, true)}
	}
	c.mu.Unlock()
	if !ok {
		writeErrors(w, http.StatusNotFound, "target not found")
		return
	}
	writeJSON(w, http.StatusOK, views)
}

// handleTargetState serves POST /api/v1/targets/{name}/state/{state}.
func (c *Collector) handleTargetState(w http.ResponseWriter, r *http.Request) {
	c.setIntendedState(w, r.PathValue("name"), r.PathValue("state"))
}

// handleConfigTargetState serves POST /api/v1/config/targets/{name}/state
// with a body such as {"state": "enabled"}; before v0.47.0 the route reads
// no body and has no state (release.go, stateFromBody).
func (c *Collector) handleConfigTargetState(w http.ResponseWriter, r *http.Request) {
	if !c.release.stateFromBody() {
		writeErrors(w, http.StatusBadRequest, "target state is required")
		return
	}
	var body struct {
		State string `json:"state"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeErrors(w, http.StatusBadRequest, err.Error())
		return
	}
	if body.State == "" {
		writeErrors(w, http.StatusBadRequest, "target state is required")
		return
	}
	c.setIntendedState(w, r.PathValue("name"), body.State)
}

// setIntendedState enables (starts) or disables (stops) a target, at once:
// it does not go through the change queue. Enabling a running or starting
// target, or disabling a stopped one, changes nothing and answers 400
// "target state not changed". An enable answers 200 even when the start
// fails again at once; only the state says so. Other states are accepted and
// ignored, as gNMIc does.
func (c *Collector) setIntendedState(w http.ResponseWriter, name, state string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.targets[name]
	if !ok {
		writeErrors(w, http.StatusNotFound, "target not found")
		return
	}
	current := t.status.State
	switch state {
	case IntendedEnabled:
		if current == StateRunning || current == StateStarting {
			writeErrors(w, http.StatusBadRequest, "target state not changed")
			return
		}
		c.startTarget(name)
	case IntendedDisabled:
		if current == StateStopped || current == StateStopping {
			writeErrors(w, http.StatusBadRequest, "target state not changed")
			return
		}
		c.stopTarget(name, t)
	}
	w.WriteHeader(http.StatusOK)
}
