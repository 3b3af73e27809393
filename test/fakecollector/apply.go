package fakecollector

import (
	"compress/gzip"
	"io"
	"net/http"
	"reflect"
	"time"
)

// handleApply serves POST /api/v1/config/apply. It answers as soon as the
// configuration is stored: the 200 means "stored", not "acted on". Targets
// change within the apply and start at once or after the start delay, or,
// with a change queue, when the worker gets to them.
func (c *Collector) handleApply(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f := c.applyFailure; f != nil {
		writeErrors(w, f.status, f.errors...)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			writeErrors(w, http.StatusInternalServerError, "gzip error: "+err.Error())
			return
		}
		defer zr.Close()
		body = zr
	}
	req, err := decodeApplyRequest(body)
	if err != nil {
		writeErrors(w, http.StatusBadRequest, "decode error: "+err.Error())
		return
	}
	if err := req.validate(c.release); err != nil {
		writeErrors(w, http.StatusBadRequest, "validate error: "+err.Error())
		return
	}
	changes := c.commit(req)
	c.applied = lastOf(append(c.applied, AppliedConfig{Time: time.Now(), Config: newSnapshot(req.raw), Changes: changes}), c.history)
	c.applyCount++
	w.WriteHeader(http.StatusOK)
}

// commit makes req the collector's configuration: deletes first, then sets,
// kind by kind in gNMIc's order. Each target removed, added or changed
// raises one target change, in that order; an unchanged value raises none.
func (c *Collector) commit(req *applyRequest) Changes {
	byKind := make(map[string]*KindChanges)
	for _, kind := range deleteOrder {
		byKind[kind] = &KindChanges{}
		for _, name := range sortedKeys(c.objects[kind]) {
			if _, keep := req.typed[kind][name]; keep {
				continue
			}
			if kind == kindTargets && isTunnelTarget(c.objects[kind][name]) {
				continue // a device's target goes with its tunnel, never with an apply (tunnel.go)
			}
			old := c.objects[kind][name]
			delete(c.objects[kind], name)
			byKind[kind].Removed = append(byKind[kind].Removed, name)
			c.publish(storeConfig, kind, name, eventDelete, old)
			c.removeComponent(kind, name)
			if kind == kindTargets {
				c.count(name).Removed++
				c.targetChanged(targetChange{name: name})
			}
		}
	}
	var reconnected []string
	for _, kind := range setOrder {
		for _, name := range sortedKeys(req.typed[kind]) {
			sent := req.typed[kind][name]
			old, exists := c.objects[kind][name]
			if exists && reflect.DeepEqual(old, sent) {
				continue
			}
			stored := c.store(kind, name, sent, exists)
			if exists {
				byKind[kind].Changed = append(byKind[kind].Changed, name)
			} else {
				byKind[kind].Added = append(byKind[kind].Added, name)
			}
			if kind == kindSubscriptions && exists {
				c.restartSubscription(name)
			}
			c.startComponent(kind, name, stored)
			if kind == kindTargets {
				if c.classifyTarget(name, old, sent, exists) {
					reconnected = append(reconnected, name)
				}
				c.targetChanged(targetChange{name: name, config: deepCopy(stored).(map[string]any)})
			}
		}
	}
	c.refreshSubscriptions()
	if m := byKind[kindTunnelTargetMatches]; len(m.Removed)+len(m.Added)+len(m.Changed) > 0 {
		c.matchTunnelDevices()
	}
	return newChanges(byKind, reconnected)
}

// store keeps an object the way gNMIc ends up holding it: named after its key,
// except processors, which are kept as sent ({type: config}; processors.go).
// An object sent without that name therefore differs from the stored one on
// the next identical apply, which then counts as a change.
func (c *Collector) store(kind, name string, sent map[string]any, exists bool) map[string]any {
	stored := deepCopy(sent).(map[string]any)
	if kind != kindProcessors {
		stored["name"] = name
	}
	if c.objects[kind] == nil {
		c.objects[kind] = make(map[string]map[string]any)
	}
	c.objects[kind][name] = stored
	event := eventCreate
	if exists {
		event = eventUpdate
	}
	c.publish(storeConfig, kind, name, event, stored)
	return stored
}

// classifyTarget counts what the apply does to a target's configuration and
// reports whether the change is one that reconnects it (a connection field
// changed).
func (c *Collector) classifyTarget(name string, old, sent map[string]any, exists bool) bool {
	counts := c.count(name)
	if !exists {
		counts.Added++
		return false
	}
	counts.Changed++
	if reflect.DeepEqual(connectionSpec(old), connectionSpec(sent)) {
		return false
	}
	counts.Reconnected++
	return true
}

// connectionFields are the target fields whose change makes gNMIc reconnect.
var connectionFields = []string{
	"address", "username", "password", "auth-scheme", "token", "proxy", "timeout",
	"tcp-keepalive", "grpc-keepalive", "insecure", "tls-ca", "tls-cert", "tls-key",
	"skip-verify", "tls-server-name", "tls-min-version", "tls-max-version", "tls-version",
	"cipher-suites", "encoding", "gzip",
}

func connectionSpec(target map[string]any) map[string]any {
	spec := make(map[string]any, len(connectionFields))
	for _, f := range connectionFields {
		if v, ok := target[f]; ok {
			spec[f] = v
		}
	}
	return spec
}

func (c *Collector) count(name string) *TargetCounts {
	if c.counts[name] == nil {
		c.counts[name] = &TargetCounts{}
	}
	return c.counts[name]
}
