package fakecollector

import (
	"fmt"
	"net"
	"reflect"
	"time"
)

// ComponentState is the runtime state gNMIc keeps of an output or an input in its state store
// (pkg/collector/store/types.go, ComponentState): running once it started, failed with the reason when it
// could not. The apply that carries a component is answered 200 whether it starts or not; only this state
// tells, on GET /api/v1/sse/{outputs,inputs}?store=state.
type ComponentState struct {
	IntendedState string    `json:"intended-state"`
	State         string    `json:"state"`
	FailedReason  string    `json:"failed-reason,omitempty"`
	LastUpdated   time.Time `json:"last-updated"`
}

// Component states, as gNMIc names them.
const (
	componentRunning = "running"
	componentFailed  = "failed"
)

// listenKeys are the output types that listen, with the key of their address and gNMIc's default: an address
// the collector cannot listen on fails the output's start.
var listenKeys = map[string]struct{ key, fallback string }{
	"prometheus": {key: "listen", fallback: ":9804"},
	"gnmi":       {key: "address", fallback: ":57400"},
}

// settingFailure is a setting the collector cannot start an output with (FailOutputSetting), or an event
// processor with (FailProcessorSetting).
type settingFailure struct {
	key    string
	value  any
	reason string
}

// FailOutputSetting makes every output whose key is set to value (as JSON decodes it: a string, a float64, a
// bool) fail to start with reason, as gNMIc fails an output whose initialisation errs: the apply is answered
// 200 and stored, the output's state is failed with the reason, targets keep running. Outputs applied from
// now on are judged; ClearOutputFailures ends it for later applies. Fixing the output (an apply that changes
// it) starts it again.
func (c *Collector) FailOutputSetting(key string, value any, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.outputFailures = append(c.outputFailures, settingFailure{key: key, value: value, reason: reason})
}

// FailProcessorSetting makes every output or input started from now on fail when one of its event processors
// has key set to value in its settings, with gNMIc's "failed initializing event processor '<name>' of
// type='<type>': <reason>", as a processor whose Init errs (a jq expression that does not compile, say) fails
// the output that applies it. A processor changed later does not start a failed output again: gNMIc updates
// the processors of running outputs only.
func (c *Collector) FailProcessorSetting(key string, value any, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.processorFailures = append(c.processorFailures, settingFailure{key: key, value: value, reason: reason})
}

// processorInitError is the error of the first processor of names whose settings FailProcessorSetting
// fails. Callers hold c.mu.
func (c *Collector) processorInitError(names []string) string {
	for _, name := range names {
		p := c.objects[kindProcessors][name]
		typ := processorType(p)
		settings, _ := p[typ].(map[string]any)
		for _, f := range c.processorFailures {
			if v, ok := settings[f.key]; ok && reflect.DeepEqual(v, f.value) {
				return fmt.Sprintf("failed initializing event processor '%s' of type='%s': %s", name, typ, f.reason)
			}
		}
	}
	return ""
}

// ClearOutputFailures undoes every FailOutputSetting and FailProcessorSetting for the applies to come.
func (c *Collector) ClearOutputFailures() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.outputFailures, c.processorFailures = nil, nil
}

// OutputStates are the runtime states of the collector's outputs, by name.
func (c *Collector) OutputStates() map[string]ComponentState {
	return c.componentStates(kindOutputs)
}

// InputStates are the runtime states of the collector's inputs, by name.
func (c *Collector) InputStates() map[string]ComponentState {
	return c.componentStates(kindInputs)
}

func (c *Collector) componentStates(kind string) map[string]ComponentState {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]ComponentState, len(c.components[kind]))
	for name, st := range c.components[kind] {
		out[name] = st
	}
	return out
}

// startComponent starts an output or input that an apply created or changed, as gNMIc's managers do on the
// config event: a failed start leaves it failed with the reason, a later change tries again. Callers hold c.mu.
func (c *Collector) startComponent(kind, name string, cfg map[string]any) {
	var reason string
	switch kind {
	case kindOutputs:
		reason = c.outputStartError(cfg)
	case kindInputs:
		reason = c.inputStartError(cfg)
	default:
		return
	}
	if reason == "" {
		if err := processorsError(eventProcessorsOf(cfg), c.objects[kindProcessors], map[string]bool{}); err != nil {
			reason = err.Error()
		}
	}
	if reason == "" {
		reason = c.processorInitError(eventProcessorsOf(cfg))
	}
	if reason != "" && !c.release.failedComponentStates() {
		c.removeComponent(kind, name) // v0.43.0 tracks no component that failed to start (release.go)
		return
	}
	st := ComponentState{IntendedState: "enabled", State: componentRunning, LastUpdated: time.Now().UTC()}
	if reason != "" {
		st.State, st.FailedReason = componentFailed, reason
	}
	if c.components[kind] == nil {
		c.components[kind] = map[string]ComponentState{}
	}
	_, existed := c.components[kind][name]
	c.components[kind][name] = st
	event := eventCreate
	if existed {
		event = eventUpdate
	}
	c.publish(storeState, kind, name, event, st)
}

// removeComponent forgets a deleted output's or input's state, as gNMIc deletes it from its state store.
// Callers hold c.mu.
func (c *Collector) removeComponent(kind, name string) {
	st, ok := c.components[kind][name]
	if !ok {
		return
	}
	delete(c.components[kind], name)
	c.publish(storeState, kind, name, eventDelete, st)
}

// outputStartError is why gNMIc cannot start the output ("" when it can), for the failures the real collector
// was seen to have and those a test asked for with FailOutputSetting.
func (c *Collector) outputStartError(cfg map[string]any) string {
	typ, _ := cfg["type"].(string)
	if !c.release.registers(kindOutputs, typ) { // the types of the collector's release (release.go)
		return "unknown output type: " + typ
	}
	for _, f := range c.outputFailures {
		if v, ok := cfg[f.key]; ok && reflect.DeepEqual(v, f.value) {
			return f.reason
		}
	}
	if typ == "file" && cfg["format"] == "proto" {
		return "proto format not supported in output type 'file'"
	}
	if l, ok := listenKeys[typ]; ok {
		address := l.fallback
		switch v := cfg[l.key].(type) {
		case nil:
		case string:
			if v != "" {
				address = v
			}
		default:
			return fmt.Sprintf("1 error(s) decoding:\n\n* '%s' expected type 'string', got unconvertible type '%s'", l.key, jsonType(v))
		}
		if err := listenable(address); err != nil {
			return "listen tcp: " + err.Error()
		}
	}
	return ""
}

// inputStartError is why gNMIc cannot start the input ("" when it can).
func (c *Collector) inputStartError(cfg map[string]any) string {
	typ, _ := cfg["type"].(string)
	if !c.release.registers(kindInputs, typ) {
		return "unknown input type: " + typ
	}
	return ""
}

// listenable checks a TCP listening address the way net.Listen parses it, without listening (every fake
// collector of a test would want the same port).
func listenable(address string) error {
	_, port, err := net.SplitHostPort(address)
	if err != nil || port == "" {
		return err
	}
	_, err = net.LookupPort("tcp", port)
	return err
}
