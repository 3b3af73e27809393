package fakecollector

import "net/http"

// configKinds are the kinds GET /api/v1/config/{kind} serves.
var configKinds = map[string]bool{
	kindTargets: true, kindSubscriptions: true, kindOutputs: true, kindInputs: true,
	kindProcessors: true, kindTunnelTargetMatches: true,
}

// The config endpoints show the stored configuration: an apply shows in them
// as soon as it is answered, whatever the runtime has acted on. Objects are
// shown as gNMIc stores them (known keys only, durations in nanoseconds,
// named after their key).

// handleConfig serves GET /api/v1/config: every kind, passwords in clear as
// gNMIc shows them there. gNMIc's exact shape of this answer is not recorded;
// the fake answers {kind: {name: object}}.
func (c *Collector) handleConfig(w http.ResponseWriter, _ *http.Request) {
	c.mu.Lock()
	all := make(map[string]map[string]map[string]any, len(configKinds))
	for kind := range configKinds {
		all[kind] = c.objectsOf(kind, false)
	}
	c.mu.Unlock()
	writeJSON(w, http.StatusOK, all)
}

// handleConfigKind serves GET /api/v1/config/{kind}: {name: object}, target
// passwords and tokens masked from v0.46.0 on (release.go, redactsTargets).
func (c *Collector) handleConfigKind(w http.ResponseWriter, r *http.Request) {
	kind := r.PathValue("kind")
	if !configKinds[kind] {
		http.NotFound(w, r)
		return
	}
	c.mu.Lock()
	objects := c.objectsOf(kind, true)
	c.mu.Unlock()
	writeJSON(w, http.StatusOK, objects)
}

// handleConfigObject serves GET /api/v1/config/{kind}/{name}: the object,
// target passwords and tokens masked as "****", or 404 with no body, as
// gNMIc answers.
func (c *Collector) handleConfigObject(w http.ResponseWriter, r *http.Request) {
	kind, name := r.PathValue("kind"), r.PathValue("name")
	if !configKinds[kind] {
		http.NotFound(w, r)
		return
	}
	c.mu.Lock()
	object, ok := c.objects[kind][name]
	if ok {
		object = c.shown(kind, object, true)
	}
	c.mu.Unlock()
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	writeJSON(w, http.StatusOK, object)
}

// objectsOf copies the stored objects of a kind, never nil so that an empty
// kind answers {}.
func (c *Collector) objectsOf(kind string, mask bool) map[string]map[string]any {
	out := make(map[string]map[string]any, len(c.objects[kind]))
	for name, object := range c.objects[kind] {
		out[name] = c.shown(kind, object, mask)
	}
	return out
}

func (c *Collector) shown(kind string, object map[string]any, mask bool) map[string]any {
	if mask && kind == kindTargets && c.release.redactsTargets() {
		return masked(object)
	}
	return deepCopy(object).(map[string]any)
}
