package fakecollector

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Event stores and types of the Server-Sent Events stream.
const (
	storeConfig = "config"
	storeState  = "state"

	eventCreate = "create"
	eventUpdate = "update"
	eventDelete = "delete"
)

// subscriberBuffer is how many events a slow stream may lag behind before
// events are dropped, as gNMIc drops them under load.
const subscriberBuffer = 1024

// event is the data of one Server-Sent Event.
type event struct {
	Timestamp time.Time `json:"timestamp"`
	Store     string    `json:"store"`
	Kind      string    `json:"kind"`
	Name      string    `json:"name"`
	EventType string    `json:"event-type"`
	Object    any       `json:"object"`
}

// subscriber is one open event stream.
type subscriber struct {
	kind   string
	stores map[string]bool
	frames chan []byte
}

var sseKinds = map[string]bool{
	kindTargets: true, kindOutputs: true, kindInputs: true, kindSubscriptions: true,
	kindProcessors: true, "assignments": true, kindTunnelTargetMatches: true,
}

// publish sends an event to the matching streams. Callers hold c.mu and pass
// an object nobody modifies afterwards.
func (c *Collector) publish(store, kind, name, eventType string, object any) {
	var frame []byte
	for s := range c.subscribers {
		if s.kind != kind || !s.stores[store] {
			continue
		}
		if frame == nil {
			frame = encodeFrame(store, kind, name, eventType, object)
		}
		select {
		case s.frames <- frame:
		default:
		}
	}
}

func encodeFrame(store, kind, name, eventType string, object any) []byte {
	data, err := json.Marshal(event{
		Timestamp: time.Now().UTC(), Store: store, Kind: kind, Name: name, EventType: eventType, Object: object,
	})
	if err != nil {
		data = []byte(`{}`)
	}
	return fmt.Appendf(nil, "event: %s\ndata: %s\n\n", eventType, data)
}

// handleEvents serves GET /api/v1/sse/{kind}?store=config|state|all: first a
// create event per existing object, then live events, with a keepalive
// comment at every interval.
func (c *Collector) handleEvents(w http.ResponseWriter, r *http.Request) {
	kind := r.PathValue("kind")
	if !sseKinds[kind] {
		writeErrors(w, http.StatusBadRequest,
			fmt.Sprintf("invalid kind %q; expected one of: targets, outputs, inputs, subscriptions", kind))
		return
	}
	store := r.URL.Query().Get("store")
	stores := map[string]map[string]bool{
		"": {storeConfig: true, storeState: true}, "all": {storeConfig: true, storeState: true},
		storeConfig: {storeConfig: true}, storeState: {storeState: true},
	}[store]
	if stores == nil {
		writeErrors(w, http.StatusBadRequest,
			fmt.Sprintf("invalid store %q; expected one of: config, state, all", store))
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming not supported", http.StatusInternalServerError)
		return
	}
	sub := &subscriber{kind: kind, stores: stores, frames: make(chan []byte, subscriberBuffer)}
	initial := c.subscribe(sub)
	defer c.unsubscribe(sub)

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Connection", "keep-alive")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	for _, frame := range initial {
		_, _ = w.Write(frame)
	}
	flusher.Flush()

	keepalive := time.NewTicker(c.keepalive)
	defer keepalive.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-c.done:
			return
		case <-keepalive.C:
			_, _ = fmt.Fprint(w, ": keepalive\n\n")
		case frame := <-sub.frames:
			_, _ = w.Write(frame)
		}
		flusher.Flush()
	}
}

// subscribe registers a stream and returns its initial create events, taken
// under the same lock so that no event falls between them.
func (c *Collector) subscribe(sub *subscriber) [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	var initial [][]byte
	if sub.stores[storeConfig] {
		for _, name := range sortedKeys(c.objects[sub.kind]) {
			initial = append(initial, encodeFrame(storeConfig, sub.kind, name, eventCreate, c.objects[sub.kind][name]))
		}
	}
	if sub.stores[storeState] && sub.kind == kindTargets {
		for _, name := range sortedKeys(c.targets) {
			initial = append(initial, encodeFrame(storeState, kindTargets, name, eventCreate, c.targets[name].status.clone()))
		}
	}
	if sub.stores[storeState] {
		for _, name := range sortedKeys(c.components[sub.kind]) {
			initial = append(initial, encodeFrame(storeState, sub.kind, name, eventCreate, c.components[sub.kind][name]))
		}
	}
	c.subscribers[sub] = struct{}{}
	return initial
}

func (c *Collector) unsubscribe(sub *subscriber) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.subscribers, sub)
}
