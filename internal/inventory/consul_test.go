package inventory_test

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	consul "github.com/hashicorp/consul/api"

	"github.com/gnmic-operator/gnmic-operator/internal/inventory"
	"github.com/gnmic-operator/gnmic-operator/internal/pki"
	"github.com/gnmic-operator/gnmic-operator/internal/targetmapping"
	"github.com/gnmic-operator/gnmic-operator/test/consulagent"
)

func TestNewConsulRefusesWhatCannotWork(t *testing.T) {
	now := time.Now()
	ca, err := pki.NewCA("ca", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	client, err := pki.NewClient(ca, "client", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	valid := inventory.ConsulOptions{Address: "consul.consul.svc:8500", Services: []string{"gnmi"}}
	for _, tc := range []struct {
		name    string
		change  func(o *inventory.ConsulOptions)
		wantErr string
	}{
		{name: "host:port", change: func(*inventory.ConsulOptions) {}},
		{name: "an https URL", change: func(o *inventory.ConsulOptions) { o.Address = "https://consul.consul.svc:8501/" }},
		{name: "an http URL", change: func(o *inventory.ConsulOptions) { o.Address = "http://10.0.0.1:8500" }},
		{name: "a client certificate", change: func(o *inventory.ConsulOptions) { o.ClientCert, o.ClientKey = client.CertPEM, client.KeyPEM }},
		{name: "a CA bundle", change: func(o *inventory.ConsulOptions) { o.CABundle = ca.CertPEM }},
		{name: "no address", change: func(o *inventory.ConsulOptions) { o.Address = "" }, wantErr: "not host:port"},
		{name: "a unix socket", change: func(o *inventory.ConsulOptions) { o.Address = "unix:///run/consul.sock" }, wantErr: "not host:port"},
		{name: "a path", change: func(o *inventory.ConsulOptions) { o.Address = "https://consul/v1" }, wantErr: "not host:port"},
		{name: "credentials in the URL", change: func(o *inventory.ConsulOptions) { o.Address = "https://u:p@consul" }, wantErr: "not host:port"},
		{name: "no service", change: func(o *inventory.ConsulOptions) { o.Services = nil }, wantErr: "no service"},
		{name: "a CA bundle without a certificate", change: func(o *inventory.ConsulOptions) { o.CABundle = []byte("not PEM") }, wantErr: "no PEM certificate"},
		{name: "a key that is not the certificate's", change: func(o *inventory.ConsulOptions) { o.ClientCert, o.ClientKey = client.CertPEM, ca.KeyPEM }, wantErr: "client certificate"},
		{name: "a certificate without its key", change: func(o *inventory.ConsulOptions) { o.ClientCert = client.CertPEM }, wantErr: "client certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := valid
			tc.change(&o)
			_, err := inventory.NewConsul(o)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("NewConsul: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("NewConsul: error %v, want one that says %q", err, tc.wantErr)
			}
		})
	}
}

// TestConsulAgainstARealAgent reads the catalog of a real Consul agent (consul agent -dev, started here).
func TestConsulAgainstARealAgent(t *testing.T) {
	binary, ok := consulagent.Binary()
	if !ok {
		t.Skipf("%s is not set: `make test-consul` builds consul (hack/consul.sh) and runs this test with it", consulagent.BinaryEnv)
	}
	ctx := context.Background()
	agent, err := consulagent.Start(ctx, binary, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(agent.Stop)
	admin := agent.ManagementClient()
	readToken := consulToken(t, agent, `service_prefix "" { policy = "read" }
node_prefix "" { policy = "read" }`)

	t.Run("each instance of the services is a record", func(t *testing.T) {
		consulRegister(t, admin, "a-leaf1", "10.1.0.1", map[string]string{"site": "ams1", "rack": "r1"},
			&consul.AgentService{ID: "gnmi", Service: "gnmi-a", Port: 57400, Tags: []string{"gnmi", "srl"}, Meta: map[string]string{"gnmic_profile": "srl"}})
		consulRegister(t, admin, "a-leaf2", "10.1.0.2", map[string]string{"site": "ams2"},
			&consul.AgentService{ID: "gnmi", Service: "gnmi-a", Address: "10.2.0.2", Port: 6030, Tags: []string{"gnmi"}})
		consulRegister(t, admin, "a-spine1", "2001:db8::1", nil,
			&consul.AgentService{ID: "gnmi", Service: "gnmi-a", Port: 57400})
		consulRegister(t, admin, "a-leaf1", "10.1.0.1", map[string]string{"site": "ams1", "rack": "r1"},
			&consul.AgentService{ID: "ssh", Service: "ssh-a", Port: 22})

		snap := consulFetch(t, inventory.ConsulOptions{Address: agent.HTTPAddress, Token: readToken,
			Services: []string{"gnmi-a"}, NodeMetaLabels: []string{"site", "role"}})
		records := consulByNode(snap.Records)
		if len(records) != 3 || snap.Announced != -1 || snap.Unchanged {
			t.Fatalf("snapshot: %d records (want 3: ssh-a is not read), announced %d (want -1), unchanged %v", len(records), snap.Announced, snap.Unchanged)
		}
		want := inventory.Record{
			"node": "a-leaf1", "nodeAddress": "10.1.0.1", "datacenter": "dc1",
			"nodeMeta": map[string]any{"site": "ams1", "rack": "r1"},
			"service":  "gnmi-a", "serviceID": "gnmi", "serviceAddress": "",
			"host": "10.1.0.1", "port": float64(57400), "address": "10.1.0.1:57400",
			"tags": []any{"gnmi", "srl"}, "meta": map[string]any{"gnmic_profile": "srl"},
			"labels": map[string]any{"site": "ams1"},
		}
		if got := withoutConsulNodeMeta(records[0]); !reflect.DeepEqual(got, want) {
			t.Errorf("record of a-leaf1:\n got %#v\nwant %#v", got, want)
		}
		if got := records[1]["address"]; got != "10.2.0.2:6030" {
			t.Errorf("a-leaf2's address is %v, want the service's own address 10.2.0.2:6030", got)
		}
		if got := records[2]["address"]; got != "[2001:db8::1]:57400" {
			t.Errorf("a-spine1's address is %v, want [2001:db8::1]:57400", got)
		}
		if got := records[2]["labels"]; !reflect.DeepEqual(got, map[string]any{}) {
			t.Errorf("a-spine1 has no node metadata: labels %v, want none", got)
		}
	})

	t.Run("tags and the filter select instances", func(t *testing.T) {
		consulRegister(t, admin, "b-leaf1", "10.3.0.1", map[string]string{"site": "ams1"},
			&consul.AgentService{ID: "gnmi", Service: "gnmi-b", Port: 57400, Tags: []string{"gnmi", "srl"}})
		consulRegister(t, admin, "b-leaf2", "10.3.0.2", map[string]string{"site": "ams2"},
			&consul.AgentService{ID: "gnmi", Service: "gnmi-b", Port: 57400, Tags: []string{"gnmi"}})
		consulRegister(t, admin, "b-leaf3", "10.3.0.3", map[string]string{"site": "ams2"},
			&consul.AgentService{ID: "gnmi", Service: "gnmi-b", Port: 57400, Tags: []string{"srl"}})
		for _, tc := range []struct {
			name   string
			tags   []string
			filter string
			want   []string
		}{
			{name: "no selection", want: []string{"b-leaf1", "b-leaf2", "b-leaf3"}},
			{name: "one tag", tags: []string{"gnmi"}, want: []string{"b-leaf1", "b-leaf2"}},
			{name: "every tag", tags: []string{"gnmi", "srl"}, want: []string{"b-leaf1"}},
			{name: "a filter on node metadata", filter: `NodeMeta.site == "ams2"`, want: []string{"b-leaf2", "b-leaf3"}},
			{name: "a tag and a filter", tags: []string{"srl"}, filter: `NodeMeta.site == "ams2"`, want: []string{"b-leaf3"}},
			{name: "no match", tags: []string{"absent"}, want: nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				snap := consulFetch(t, inventory.ConsulOptions{Address: agent.HTTPAddress, Token: readToken,
					Services: []string{"gnmi-b"}, Tags: tc.tags, Filter: tc.filter})
				if got := consulNodes(snap.Records); !reflect.DeepEqual(got, tc.want) {
					t.Errorf("nodes %v, want %v", got, tc.want)
				}
			})
		}
	})

	t.Run("several services are read in order", func(t *testing.T) {
		consulRegister(t, admin, "c-r1", "10.4.0.1", nil, &consul.AgentService{ID: "gnmi", Service: "gnmi-c1", Port: 57400})
		consulRegister(t, admin, "c-r2", "10.4.0.2", nil, &consul.AgentService{ID: "gnmi", Service: "gnmi-c2", Port: 57400})
		snap := consulFetch(t, inventory.ConsulOptions{Address: agent.HTTPAddress, Token: readToken,
			Services: []string{"gnmi-c2", "gnmi-c1", "gnmi-absent"}})
		var got []string
		for _, r := range snap.Records {
			got = append(got, r["service"].(string))
		}
		if want := []string{"gnmi-c2", "gnmi-c1"}; !reflect.DeepEqual(got, want) {
			t.Errorf("services of the records %v, want %v (a service with no instance gives none)", got, want)
		}
	})

	t.Run("unchanged until an instance or its node changes", func(t *testing.T) {
		consulRegister(t, admin, "d-r1", "10.5.0.1", map[string]string{"site": "ams1"}, &consul.AgentService{ID: "gnmi", Service: "gnmi-d", Port: 57400})
		consulRegister(t, admin, "d-r2", "10.5.0.2", nil, &consul.AgentService{ID: "gnmi", Service: "gnmi-d", Port: 57400})
		p, err := inventory.NewConsul(inventory.ConsulOptions{Address: agent.HTTPAddress, Token: readToken,
			Services: []string{"gnmi-d"}, NodeMetaLabels: []string{"site"}})
		if err != nil {
			t.Fatal(err)
		}
		step := func(what string, wantUnchanged bool, wantNodes ...string) inventory.Snapshot {
			t.Helper()
			snap, err := p.Fetch(ctx)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if snap.Unchanged != wantUnchanged {
				t.Fatalf("%s: unchanged %v, want %v", what, snap.Unchanged, wantUnchanged)
			}
			if got := consulNodes(snap.Records); !wantUnchanged && !reflect.DeepEqual(got, wantNodes) {
				t.Fatalf("%s: nodes %v, want %v", what, got, wantNodes)
			}
			return snap
		}
		step("first fetch", false, "d-r1", "d-r2")
		step("nothing changed", true)
		consulRegister(t, admin, "d-r1", "10.5.0.1", map[string]string{"site": "ams9"}, &consul.AgentService{ID: "gnmi", Service: "gnmi-d", Port: 57400})
		snap := step("the node's metadata changed", false, "d-r1", "d-r2")
		if got := consulByNode(snap.Records)[0]["labels"]; !reflect.DeepEqual(got, map[string]any{"site": "ams9"}) {
			t.Errorf("labels of d-r1 after its node moved: %v, want site=ams9", got)
		}
		step("nothing changed again", true)
		consulRegister(t, admin, "d-r2", "10.5.0.2", nil, &consul.AgentService{ID: "gnmi", Service: "gnmi-d", Port: 57401})
		snap = step("the instance's port changed", false, "d-r1", "d-r2")
		if got := consulByNode(snap.Records)[1]["address"]; got != "10.5.0.2:57401" {
			t.Errorf("address of d-r2 after its port changed: %v, want 10.5.0.2:57401", got)
		}
		if _, err := admin.Catalog().Deregister(&consul.CatalogDeregistration{Node: "d-r2"}, nil); err != nil {
			t.Fatal(err)
		}
		step("a node left", false, "d-r1")
	})

	t.Run("what a token may not read", func(t *testing.T) {
		consulRegister(t, admin, "e-r1", "10.6.0.1", nil, &consul.AgentService{Service: "gnmi-e", Port: 57400})
		consulRegister(t, admin, "e-secret", "10.6.0.2", nil, &consul.AgentService{Service: "gnmi-e", Port: 57400})
		partial := consulToken(t, agent, `service "gnmi-e" { policy = "read" }
node "e-r1" { policy = "read" }`)
		nodesOnly := consulToken(t, agent, `node_prefix "" { policy = "read" }`)
		nothing := consulToken(t, agent, `key_prefix "" { policy = "read" }`)
		// The client library would send CONSUL_HTTP_TOKEN when the inventory has no token: it must not.
		t.Setenv("CONSUL_HTTP_TOKEN", consulagent.ManagementToken)
		for _, tc := range []struct {
			name, token string
			wantRecords int
			wantErr     string
		}{
			// Without a token (the anonymous one) Consul answers as if the service had no instance, and says
			// nothing: the sync's truncation guard is what keeps the Targets (docs/target-sources.md (Consul)).
			{name: "no token: Consul says the service is empty", wantRecords: 0},
			// With a token Consul leaves out what the token may not read, and says so.
			{name: "a token without any right on services and nodes", token: nothing, wantErr: "may not read every instance of service gnmi-e"},
			{name: "a token that may not read one node", token: partial, wantErr: "may not read every instance of service gnmi-e"},
			{name: "a token that may read the nodes but not the service", token: nodesOnly, wantErr: "may not read every instance of service gnmi-e"},
			{name: "a token unknown to Consul", token: "00000000-0000-4000-8000-000000000000", wantErr: "ACL not found"},
			{name: "a token that reads everything", token: readToken, wantRecords: 2},
		} {
			t.Run(tc.name, func(t *testing.T) {
				p, err := inventory.NewConsul(inventory.ConsulOptions{Address: agent.HTTPAddress, Token: tc.token, Services: []string{"gnmi-e"}})
				if err != nil {
					t.Fatal(err)
				}
				snap, err := p.Fetch(ctx)
				switch {
				case tc.wantErr == "" && err != nil:
					t.Fatalf("Fetch: %v", err)
				case tc.wantErr == "" && len(snap.Records) != tc.wantRecords:
					t.Fatalf("Fetch: %d records, want %d", len(snap.Records), tc.wantRecords)
				case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
					t.Fatalf("Fetch: error %v (%d records), want one that says %q", err, len(snap.Records), tc.wantErr)
				}
			})
		}
	})

	t.Run("over HTTPS with a client certificate", func(t *testing.T) {
		consulRegister(t, admin, "f-r1", "10.7.0.1", nil, &consul.AgentService{ID: "gnmi", Service: "gnmi-f", Port: 57400})
		for _, tc := range []struct {
			name    string
			change  func(o *inventory.ConsulOptions)
			wantErr string
		}{
			{name: "CA and client certificate", change: func(*inventory.ConsulOptions) {}},
			{name: "the certificate's other name", change: func(o *inventory.ConsulOptions) { o.ServerName = "server.dc1.consul" }},
			// TLS 1.3 refuses a missing client certificate after the handshake: depending on timing the client
			// reads the alert (certificate required) or a broken connection; either way the fetch fails.
			{name: "no client certificate", change: func(o *inventory.ConsulOptions) { o.ClientCert, o.ClientKey = nil, nil }, wantErr: "read the instances of service gnmi-f"},
			{name: "the system's CAs", change: func(o *inventory.ConsulOptions) { o.CABundle = nil }, wantErr: "certificate signed by unknown authority"},
			{name: "a name the certificate lacks", change: func(o *inventory.ConsulOptions) { o.ServerName = "consul.example.com" }, wantErr: "certificate is valid for"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				o := inventory.ConsulOptions{Address: "https://" + agent.HTTPSAddress, Token: readToken, Services: []string{"gnmi-f"},
					CABundle: agent.CA.CertPEM, ClientCert: agent.Client.CertPEM, ClientKey: agent.Client.KeyPEM}
				tc.change(&o)
				p, err := inventory.NewConsul(o)
				if err != nil {
					t.Fatal(err)
				}
				snap, err := p.Fetch(ctx)
				switch {
				case tc.wantErr == "" && err != nil:
					t.Fatalf("Fetch: %v", err)
				case tc.wantErr == "" && len(snap.Records) != 1:
					t.Fatalf("Fetch: %d records, want 1", len(snap.Records))
				case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
					t.Fatalf("Fetch: error %v, want one that says %q", err, tc.wantErr)
				}
			})
		}
	})

	t.Run("Consul's errors fail the fetch with Consul's words", func(t *testing.T) {
		for _, tc := range []struct {
			name    string
			o       inventory.ConsulOptions
			wantErr string
		}{
			{name: "a filter Consul cannot parse", o: inventory.ConsulOptions{Address: agent.HTTPAddress, Token: readToken,
				Services: []string{"gnmi-a"}, Filter: `NodeMeta.site ==`}, wantErr: "Failed to create boolean expression evaluator"},
			{name: "an unknown datacenter", o: inventory.ConsulOptions{Address: agent.HTTPAddress, Token: readToken,
				Services: []string{"gnmi-a"}, Datacenter: "dc9"}, wantErr: "No path to datacenter"},
			{name: "nobody listening", o: inventory.ConsulOptions{Address: "127.0.0.1:1", Services: []string{"gnmi-a"}}, wantErr: "connection refused"},
			{name: "plain HTTP to the HTTPS port", o: inventory.ConsulOptions{Address: agent.HTTPSAddress, Token: readToken,
				Services: []string{"gnmi-a"}, Timeout: 5 * time.Second}, wantErr: "HTTP request to an HTTPS server"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				p, err := inventory.NewConsul(tc.o)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := p.Fetch(ctx); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Fetch: error %v, want one that says %q", err, tc.wantErr)
				}
			})
		}
	})

	t.Run("the consul preset maps the records to Targets", func(t *testing.T) {
		// Devices registered as external nodes, one instance each: its ID is the service's name (Consul's default),
		// the node names it.
		consulRegister(t, admin, "g-leaf1", "10.8.0.1", map[string]string{"site": "ams1", "rack": "r1"},
			&consul.AgentService{Service: "gnmi-g", Port: 57400, Meta: map[string]string{"gnmic_profile": "srl"}})
		consulRegister(t, admin, "g-Spine_1", "10.8.0.2", map[string]string{"site": "ams1"},
			&consul.AgentService{ID: "gnmi-g", Service: "gnmi-g", Port: 6030})
		// Devices registered as services of one agent's node: the instance's ID names them.
		consulRegister(t, admin, "g-collector", "10.8.0.100", nil,
			&consul.AgentService{ID: "edge7", Service: "gnmi-g", Address: "192.0.2.7", Port: 57400})
		consulRegister(t, admin, "g-collector", "10.8.0.100", nil,
			&consul.AgentService{ID: "edge8", Service: "gnmi-g", Address: "192.0.2.8"})
		snap := consulFetch(t, inventory.ConsulOptions{Address: agent.HTTPAddress, Token: readToken,
			Services: []string{"gnmi-g"}, NodeMetaLabels: []string{"site"}})
		mapper, err := targetmapping.Compile(targetmapping.Mapping{Preset: targetmapping.PresetConsul, DefaultProfile: "default", AllowedProfiles: []string{"srl"},
			DefaultPort: 9339, DefaultLabels: map[string]string{"source": "consul"}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := mapper.Map(context.Background(), snap.Records, 0)
		if err != nil {
			t.Fatal(err)
		}
		sort.Slice(res.Targets, func(i, j int) bool { return res.Targets[i].Name < res.Targets[j].Name })
		want := []targetmapping.Target{
			{Name: "edge7", Address: "192.0.2.7:57400", Profile: "default", Labels: map[string]string{"source": "consul"}},
			{Name: "edge8", Address: "192.0.2.8:9339", Profile: "default", Labels: map[string]string{"source": "consul"}},
			{Name: "g-leaf1", Address: "10.8.0.1:57400", Profile: "srl", Labels: map[string]string{"source": "consul", "site": "ams1"}},
			{Name: "g-spine-1", Address: "10.8.0.2:6030", Profile: "default", Labels: map[string]string{"source": "consul", "site": "ams1"}},
		}
		if !reflect.DeepEqual(res.Targets, want) || len(res.Invalid) != 0 || res.Skipped != 0 {
			t.Errorf("targets:\n got %+v\nwant %+v\ninvalid %v, skipped %d", res.Targets, want, res.Invalid, res.Skipped)
		}
	})
}

var consulPolicies int

// consulToken creates an ACL token with a policy of these rules.
func consulToken(t *testing.T, agent *consulagent.Agent, rules string) string {
	t.Helper()
	consulPolicies++
	token, err := agent.CreateToken(context.Background(), fmt.Sprintf("policy-%d", consulPolicies), rules)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// consulRegister registers an external node (a device, as consul-esm and network inventories register them) and a
// service instance on it.
func consulRegister(t *testing.T, admin *consul.Client, node, address string, meta map[string]string, service *consul.AgentService) {
	t.Helper()
	_, err := admin.Catalog().Register(&consul.CatalogRegistration{Node: node, Address: address, NodeMeta: meta, Service: service}, nil)
	if err != nil {
		t.Fatalf("register %s/%s: %v", node, service.ID, err)
	}
}

func consulFetch(t *testing.T, o inventory.ConsulOptions) inventory.Snapshot {
	t.Helper()
	p, err := inventory.NewConsul(o)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := p.Fetch(context.Background())
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	return snap
}

// consulByNode sorts records by node, then instance ID.
func consulByNode(records []inventory.Record) []inventory.Record {
	out := append([]inventory.Record(nil), records...)
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i]["node"].(string)+"/"+out[i]["serviceID"].(string), out[j]["node"].(string)+"/"+out[j]["serviceID"].(string)
		return a < b
	})
	return out
}

func consulNodes(records []inventory.Record) []string {
	var out []string
	for _, r := range consulByNode(records) {
		out = append(out, r["node"].(string))
	}
	return out
}

// withoutConsulNodeMeta drops the metadata Consul adds to its own agents' nodes (consul-version...), which an
// external node does not have but a future Consul might add.
func withoutConsulNodeMeta(r inventory.Record) inventory.Record {
	out := inventory.Record{}
	for k, v := range r {
		out[k] = v
	}
	meta := map[string]any{}
	for k, v := range r["nodeMeta"].(map[string]any) {
		if !strings.HasPrefix(k, "consul-") {
			meta[k] = v
		}
	}
	out["nodeMeta"] = meta
	return out
}
