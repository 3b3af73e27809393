package fakecollector

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"regexp"

	tpb "github.com/openconfig/grpctunnel/proto/tunnel"
	"github.com/openconfig/grpctunnel/tunnel"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// The tunnel server emulation: gNMIc's tunnel-server (pkg/collector/managers/targets/tunnel_server.go at
// 597750387b51), serving the real grpctunnel protocol (github.com/openconfig/grpctunnel v0.1.0, the version
// gNMIc pins), so that a test device registers with the real grpctunnel client. As in gNMIc:
//   - a device that registers a target (ID, type) is remembered; when one of the tunnel-target-matches matches
//     it (regexp.MatchString on the ID, then on the type; of several, the first by name), the collector stores a
//     target named after the ID whose configuration is the match's config plus tunnel-target-type, and runs
//     it like any target (GET /api/v1/targets, the event streams, metrics);
//   - a device that matches nothing is ignored, and matched again whenever the tunnel-target-matches change:
//     an apply that adds, changes or removes a match upserts or deletes the targets of every registered device;
//   - an apply never removes a tunnel target (gNMIc skips targets with tunnel-target-type when it deletes the
//     targets absent from the body); only the device deregistering (or its tunnel closing) or no match left
//     does;
//   - the tunnel-target-type key of a pushed target is ignored (its mapstructure tag is "-").
// Before v0.47.0 no match ever matches (release.go, tunnelMatches): every device stays registered and ignored.
// Not emulated: gNMIc then dials the device through the tunnel and runs its subscriptions; the fake starts the
// target as it starts any other (WithStartDelay, FailStart, DeviceDown apply), without opening a session.

// tunnelTargetTypeKey marks, in a target's configuration, a target that came through the tunnel server.
const tunnelTargetTypeKey = "tunnel-target-type"

// ServeTunnel runs the collector's gRPC tunnel server on addr ("127.0.0.1:0", or a pod IP and port) until
// Close, with TLS when tlsConfig is not nil (its ClientAuth says what it asks of devices, as
// tunnel-server.tls.client-auth does). It returns the address it listens on.
func (c *Collector) ServeTunnel(addr string, tlsConfig *tls.Config) (string, error) {
	ts, err := tunnel.NewServer(tunnel.ServerConfig{
		AddTargetHandler:    c.tunnelTargetRegistered,
		DeleteTargetHandler: c.tunnelTargetDeregistered,
		RegisterHandler:     func(tunnel.ServerSession) error { return nil },
		Handler:             func(tunnel.ServerSession, io.ReadWriteCloser) error { return nil },
	})
	if err != nil {
		return "", fmt.Errorf("fake collector tunnel server: %w", err)
	}
	var opts []grpc.ServerOption
	if tlsConfig != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(tlsConfig)))
	}
	listener, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("fake collector tunnel server listen on %s: %w", addr, err)
	}
	server := grpc.NewServer(opts...)
	tpb.RegisterTunnelServer(server, ts)
	c.mu.Lock()
	if c.closed || c.tunnelServer != nil {
		c.mu.Unlock()
		_ = listener.Close()
		return "", errors.New("fake collector closed or already serving a tunnel")
	}
	c.tunnelServer = server
	c.mu.Unlock()
	go func() { _ = server.Serve(listener) }()
	return listener.Addr().String(), nil
}

// TunnelDevices are the devices registered with the tunnel server now, ID to type, matched or not.
func (c *Collector) TunnelDevices() map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]string, len(c.tunnelDevices))
	for id, typ := range c.tunnelDevices {
		out[id] = typ
	}
	return out
}

func (c *Collector) tunnelTargetRegistered(tt tunnel.Target) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errors.New("collector closed")
	}
	c.tunnelDevices[tt.ID] = tt.Type
	c.matchTunnelDevice(tt.ID, tt.Type)
	return nil
}

func (c *Collector) tunnelTargetDeregistered(tt tunnel.Target) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.tunnelDevices, tt.ID)
	if !c.closed {
		c.removeTunnelTarget(tt.ID)
	}
	return nil
}

// matchTunnelDevices matches every registered device again, after the tunnel-target-matches changed.
func (c *Collector) matchTunnelDevices() {
	for _, id := range sortedKeys(c.tunnelDevices) {
		c.matchTunnelDevice(id, c.tunnelDevices[id])
	}
}

// matchTunnelDevice stores (or updates) the target of a registered device that a match takes, and removes it
// when none does. Callers hold c.mu.
func (c *Collector) matchTunnelDevice(id, typ string) {
	match, ok := c.tunnelMatch(id, typ)
	if !ok {
		c.removeTunnelTarget(id)
		return
	}
	cfg := map[string]any{}
	if m, ok := match["config"].(map[string]any); ok {
		cfg = deepCopy(m).(map[string]any)
	}
	cfg["name"], cfg[tunnelTargetTypeKey] = id, typ
	old, exists := c.objects[kindTargets][id]
	if exists && reflect.DeepEqual(old, cfg) {
		return
	}
	stored := c.store(kindTargets, id, cfg, exists)
	c.classifyTarget(id, old, cfg, exists)
	c.targetChanged(targetChange{name: id, config: deepCopy(stored).(map[string]any)})
}

// tunnelMatch is the first tunnel-target-match by name whose id and type expressions match, as gNMIc picks it;
// an expression that does not compile matches nothing. Before v0.47.0 nothing ever matches: the device stays
// registered and ignored (release.go, tunnelMatches).
func (c *Collector) tunnelMatch(id, typ string) (map[string]any, bool) {
	if !c.release.tunnelMatches() {
		return nil, false
	}
	matches := c.objects[kindTunnelTargetMatches]
	for _, name := range sortedKeys(matches) {
		m := matches[name]
		idExpr, _ := m["id"].(string)
		typeExpr, _ := m["type"].(string)
		if okID, err := regexp.MatchString(idExpr, id); err != nil || !okID {
			continue
		}
		if okType, err := regexp.MatchString(typeExpr, typ); err != nil || !okType {
			continue
		}
		return m, true
	}
	return nil, false
}

// removeTunnelTarget removes the target of a device, if the collector runs one for it. Callers hold c.mu.
func (c *Collector) removeTunnelTarget(id string) {
	old, ok := c.objects[kindTargets][id]
	if !ok || !isTunnelTarget(old) {
		return
	}
	delete(c.objects[kindTargets], id)
	c.publish(storeConfig, kindTargets, id, eventDelete, old)
	c.count(id).Removed++
	c.targetChanged(targetChange{name: id})
}

func isTunnelTarget(cfg map[string]any) bool {
	typ, _ := cfg[tunnelTargetTypeKey].(string)
	return typ != ""
}

// decodeTunnelTargetMatch decodes a tunnel-target-match as gNMIc's config.TunnelTargetMatch: type and id
// strings, and config a target configuration (types.TargetConfig).
func decodeTunnelTargetMatch(path string, obj map[string]any) (map[string]any, error) {
	out := map[string]any{}
	for _, key := range []string{"type", "id"} {
		switch v := obj[key].(type) {
		case nil:
		case string:
			out[key] = v
		default:
			return nil, fmt.Errorf("'%s.%s' expected type 'string', got '%s'", path, key, jsonType(v))
		}
	}
	switch cfg := obj["config"].(type) {
	case nil:
	case map[string]any:
		typed, err := targetSchema.decode(path+".config", cfg)
		if err != nil {
			return nil, err
		}
		out["config"] = typed
	default:
		return nil, fmt.Errorf("'%s.config' expected a map, got '%s'", path, jsonType(cfg))
	}
	return out, nil
}
