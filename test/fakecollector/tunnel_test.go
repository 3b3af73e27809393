package fakecollector

import (
	"context"
	"crypto/tls"
	"strings"
	"testing"
	"time"
)

// tunnelConfig is an apply body with subscription sub1, a pushed target r1 and the tunnel-target-matches
// (name -> JSON object body without braces).
func tunnelConfig(matches map[string]string) string {
	var b strings.Builder
	b.WriteString(`{"subscriptions":{"sub1":{"name":"sub1","paths":["/interfaces"]}},"targets":{"r1":{` + good("r1", "a:1") +
		`}},"tunnel-target-matches":{`)
	for i, name := range sortedKeys(matches) {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"` + name + `":{` + matches[name] + `}`)
	}
	b.WriteString("}}")
	return b.String()
}

const leafMatch = `"type":"^GNMI_GNOI$","id":"^leaf-","config":{"timeout":"10s","retry-timer":"10s","insecure":true,"subscriptions":["sub1"]}`

func startTunnel(t *testing.T, c *Collector, tlsConfig *tls.Config) string {
	t.Helper()
	addr, err := c.ServeTunnel("127.0.0.1:0", tlsConfig)
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

func dialIn(t *testing.T, addr string, tlsConfig *tls.Config, id, typ string) *Device {
	t.Helper()
	d, err := DialIn(context.Background(), addr, tlsConfig, id, typ)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

func TestADeviceMatchedByATunnelTargetMatchIsCollectedAsATargetNamedAfterItsID(t *testing.T) {
	c := StartForTest(t)
	addr := startTunnel(t, c, nil)
	mustApply(t, c, tunnelConfig(map[string]string{"leaves": leafMatch}))

	dialIn(t, addr, nil, "leaf-1", "GNMI_GNOI")
	waitFor(t, "leaf-1 collecting", func() bool { s, ok := c.TargetStatus("leaf-1"); return ok && s.Collecting() })

	v := running(t, c)["leaf-1"]
	if v.Config["tunnel-target-type"] != "GNMI_GNOI" || v.Config["name"] != "leaf-1" {
		t.Fatalf("GET /api/v1/targets shows leaf-1 with config %v, want name leaf-1 and tunnel-target-type GNMI_GNOI", v.Config)
	}
	if subs, _ := v.Config["subscriptions"].([]any); len(subs) != 1 || subs[0] != "sub1" {
		t.Fatalf("leaf-1 runs subscriptions %v, want the match's [sub1]", v.Config["subscriptions"])
	}
	if _, pushed := running(t, c)["r1"]; !pushed {
		t.Fatal("the pushed target r1 is gone")
	}
}

func TestADeviceThatMatchesNothingIsIgnoredUntilAMatchTakesIt(t *testing.T) {
	c := StartForTest(t)
	addr := startTunnel(t, c, nil)
	mustApply(t, c, tunnelConfig(map[string]string{"leaves": leafMatch}))

	dialIn(t, addr, nil, "spine-1", "GNMI_GNOI")
	dialIn(t, addr, nil, "leaf-2", "GNOI_ONLY")
	waitFor(t, "both registered", func() bool { return len(c.TunnelDevices()) == 2 })
	if got := c.Targets(); len(got) != 1 {
		t.Fatalf("targets %v: a device whose ID or type does not match must not become a target", got)
	}

	mustApply(t, c, tunnelConfig(map[string]string{"leaves": leafMatch,
		"spines": `"id":"^spine-","config":{"timeout":"10s","insecure":true}`}))
	waitFor(t, "spine-1 collecting", func() bool { s, ok := c.TargetStatus("spine-1"); return ok && s.Collecting() })
	if _, ok := c.TargetStatus("leaf-2"); ok {
		t.Fatal("leaf-2 registered type GNOI_ONLY, which no match takes")
	}
}

func TestAnApplyNeverRemovesATunnelTargetButRemovingItsMatchDoes(t *testing.T) {
	c := StartForTest(t)
	addr := startTunnel(t, c, nil)
	mustApply(t, c, tunnelConfig(map[string]string{"leaves": leafMatch}))
	dialIn(t, addr, nil, "leaf-1", "GNMI_GNOI")
	waitFor(t, "leaf-1 runs", func() bool { _, ok := c.TargetStatus("leaf-1"); return ok })

	// The operator's declarative apply holds r1 only: the device's target stays, as gNMIc skips targets
	// with tunnel-target-type when it deletes the targets an apply leaves out.
	changes := mustApply(t, c, tunnelConfig(map[string]string{"leaves": leafMatch, "other": `"id":"^none$"`}))
	if s, ok := c.TargetStatus("leaf-1"); !ok || !s.Collecting() || len(changes.Targets.Removed) != 0 {
		t.Fatalf("leaf-1 after an apply without it: %+v (removed %v), want still collecting", s, changes.Targets.Removed)
	}
	mustApply(t, c, config(map[string]string{"r1": good("r1", "a:1")}))
	if _, ok := c.TargetStatus("leaf-1"); ok {
		t.Fatal("leaf-1 still runs after the apply removed the only match that took it")
	}
	if s, ok := c.TargetStatus("r1"); !ok || !s.Collecting() {
		t.Fatalf("r1: %+v, want collecting", s)
	}
}

func TestATunnelTargetGoesWhenItsDeviceDisconnects(t *testing.T) {
	c := StartForTest(t)
	addr := startTunnel(t, c, nil)
	mustApply(t, c, tunnelConfig(map[string]string{"leaves": leafMatch}))
	d := dialIn(t, addr, nil, "leaf-1", "GNMI_GNOI")
	waitFor(t, "leaf-1 runs", func() bool { _, ok := c.TargetStatus("leaf-1"); return ok })

	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "leaf-1 removed", func() bool { _, ok := c.TargetStatus("leaf-1"); return !ok })
	if len(c.TunnelDevices()) != 0 {
		t.Fatalf("devices %v after the only one disconnected", c.TunnelDevices())
	}
}

func TestOfSeveralMatchingTunnelTargetMatchesTheFirstByNameConfiguresTheTarget(t *testing.T) {
	c := StartForTest(t)
	addr := startTunnel(t, c, nil)
	mustApply(t, c, `{"subscriptions":{"a":{"name":"a"},"b":{"name":"b"}},"tunnel-target-matches":{`+
		`"z-any":{"config":{"timeout":"10s","insecure":true,"subscriptions":["b"]}},`+
		`"a-leaves":{"id":"leaf","config":{"timeout":"10s","insecure":true,"subscriptions":["a"]}}}}`)
	dialIn(t, addr, nil, "leaf-1", "GNMI_GNOI")
	waitFor(t, "leaf-1 runs", func() bool { _, ok := c.TargetStatus("leaf-1"); return ok })
	if subs, _ := running(t, c)["leaf-1"].Config["subscriptions"].([]any); len(subs) != 1 || subs[0] != "a" {
		t.Fatalf("leaf-1 runs %v, want [a] from a-leaves, the first matching rule by name", subs)
	}
}

func TestATunnelTargetMatchOfTheWrongShapeIsRefusedAsGNMIcRefusesIt(t *testing.T) {
	c := StartForTest(t)
	a := apply(t, c, `{"subscriptions":{"a":{"name":"a"}},"tunnel-target-matches":{"m":{"id":"x","config":{"timeout":true}}}}`)
	if a.status != 400 || !strings.Contains(a.body, "tunnel-target-matches[m].config") {
		t.Fatalf("got %d %s, want 400 naming the match's config", a.status, a.body)
	}
	if a := apply(t, c, `{"tunnel-target-matches":{"m":{"id":"x"}}}`); a.status != 400 {
		t.Fatalf("matches without any subscription: got %d, want 400", a.status)
	}
}

func TestTheTunnelServerWithMutualTLSAdmitsOnlyDevicesWithACertificateFromItsCA(t *testing.T) {
	pki, err := NewPKI()
	if err != nil {
		t.Fatal(err)
	}
	c := StartForTest(t)
	addr := startTunnel(t, c, pki.ServerTLS())
	mustApply(t, c, tunnelConfig(map[string]string{"leaves": leafMatch}))

	if d, err := DialIn(context.Background(), addr, &tls.Config{RootCAs: pki.pool(), MinVersion: tls.VersionTLS12}, "leaf-9", "GNMI_GNOI"); err == nil {
		select { // with TLS 1.3 the server refuses the missing certificate once the stream is used
		case <-d.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("a device without a client certificate kept its tunnel")
		}
		_ = d.Close()
	}
	dialIn(t, addr, pki.ClientTLS(), "leaf-1", "GNMI_GNOI")
	waitFor(t, "leaf-1 collecting", func() bool { s, ok := c.TargetStatus("leaf-1"); return ok && s.Collecting() })
	if _, ok := c.TunnelDevices()["leaf-9"]; ok {
		t.Fatal("a device without a client certificate registered")
	}
}
